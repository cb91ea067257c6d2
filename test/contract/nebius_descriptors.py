"""The descriptors the `nebius` SDK ships, for the names given on stdin (JSON list of full names of
messages, enums and services): fields (number, type, label, oneof, map), enum values, and each
service's RPCs and the address the SDK resolves for it. Prints one JSON object."""
import importlib
import importlib.metadata
import json
import sys

from nebius.base.protos.dynamic import REGISTRY

TYPES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
         9: "string", 10: "group", 11: "message", 12: "bytes", 13: "uint32", 14: "enum", 15: "sfixed32",
         16: "sfixed64", 17: "sint32", 18: "sint64"}
DOMAIN = "api.nebius.cloud:443"


def load(name):
    """Import the SDK package of a proto package (nebius.compute.v1 -> nebius.api.nebius.compute.v1)."""
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):
        try:
            importlib.import_module("nebius.api." + ".".join(parts[:n]))
            return
        except ImportError:
            continue


def field_type(f):
    if f.type == 11:
        return f.message_type.full_name
    if f.type == 14:
        return f.enum_type.full_name
    return TYPES[f.type]


def message(m):
    fields = {}
    for f in m.fields:
        entry = {"number": f.number, "type": field_type(f), "repeated": f.label == 3,
                 "oneof": f.containing_oneof.name if f.containing_oneof is not None else None}
        # The map_entry option, read from the DescriptorProto (the facade's GetOptions cannot decode it).
        if f.type == 11 and f.message_type._proto.options.map_entry:
            k, v = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
            entry.update(map={"key": field_type(k), "value": field_type(v)}, repeated=False, type="map")
        fields[f.name] = entry
    return {"kind": "message", "file": m.file.name, "package": m.file.package, "fields": fields}


def service(s):
    from nebius.api.nebius import api_service_name
    short = s.full_name.split(".")[1]
    opts = s.GetOptions()
    annotated = opts.get_extension(api_service_name) if hasattr(opts, "get_extension") else None
    methods = {m.name: {"input": m.input_type.full_name, "output": m.output_type.full_name,
                        "path": f"/{s.full_name}/{m.name}"} for m in s.methods}
    return {"kind": "service", "file": s.file.name, "package": s.file.package,
            "address": f"{annotated or short}.{DOMAIN}", "methods": methods}


def describe(name):
    load(name)
    for kind, get in (("message", REGISTRY.message_descriptor), ("enum", REGISTRY.enum_descriptor),
                      ("service", REGISTRY.service_descriptor)):
        try:
            d = get(name)
        except (KeyError, LookupError):
            continue
        if kind == "message":
            return message(d)
        if kind == "enum":
            return {"kind": "enum", "file": d.file.name, "package": d.file.package,
                    "values": {v.name: v.number for v in d.values}}
        return service(d)
    return None


names = json.load(sys.stdin)
print(json.dumps({"client": "nebius", "version": importlib.metadata.version("nebius"),
                  "descriptors": {n: describe(n) for n in names}}))
