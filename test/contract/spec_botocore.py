"""AWS exchanges judged against botocore's service models (the data the AWS SDKs are generated from).

- `botocore-query` (EC2): a form-encoded request (`Action=RunInstances&...`) is walked key by key
  through the operation's input shape, with EC2's wire names (`queryName`, else `locationName` or
  the member name with its first letter upper-cased; lists as `Name.N`); an answer our fixture
  served (an exchange with `response`) is walked element by element through the output shape
  (`locationName`, else the member name; list members as `<item>`).
- `botocore-json` (JSON 1.1: Price List, Service Quotas): the operation comes from `X-Amz-Target`;
  the request body is checked against the input shape and a 2xx answer against the output shape.

Checked: unknown members, scalar types, enum values, required members of every structure seen.
"""
import botocore
from botocore.loaders import create_loader
from botocore.model import ServiceModel


def _f(where, method, template, at, rule):
    return {"where": where, "method": method, "template": template, "at": at, "rule": rule}


def _model(service):
    return ServiceModel(create_loader().load_service_model(service, "service-2"), service_name=service)


def _scalar(shape, value):
    """A broken rule for one scalar, or None. `value` is a str on the query wire, JSON-typed otherwise."""
    t = shape.type_name
    if t in ("integer", "long"):
        ok = isinstance(value, int) and not isinstance(value, bool) if not isinstance(value, str) else value.lstrip("-").isdigit()
        return None if ok else f"type {t}"
    if t in ("double", "float"):
        if isinstance(value, str):
            try:
                float(value)
                return None
            except ValueError:
                return f"type {t}"
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else f"type {t}"
    if t == "boolean":
        return None if value in (True, False, "true", "false") else "type boolean"
    if t == "string":
        if not isinstance(value, str):
            return "type string"
        enum = shape.metadata.get("enum")
        return None if not enum or value in enum else f"enum {sorted(enum)[:8]}"
    if t == "timestamp":
        return None if isinstance(value, (str, int, float)) else "type timestamp"
    return None


# --- EC2 query ------------------------------------------------------------------------------------

def _wire_name(name, member):
    s = member.serialization
    if s.get("queryName"):
        return s["queryName"]
    if s.get("name"):
        return s["name"][0].upper() + s["name"][1:]
    return name[0].upper() + name[1:]


def _walk_query(shape, parts, value):
    """The rule broken by the flat key `parts` = value under `shape`, or None."""
    if shape.type_name == "structure":
        if not parts:
            return "a structure given a value"
        by_wire = {_wire_name(n, m): m for n, m in shape.members.items()}
        member = by_wire.get(parts[0])
        return f"unknown member {parts[0]}" if member is None else _walk_query(member, parts[1:], value)
    if shape.type_name == "list":
        if not parts or not parts[0].isdigit():
            return "a list without an index"
        return _walk_query(shape.member, parts[1:], value)
    if parts:
        return f"{shape.type_name} given members"
    return _scalar(shape, value)


def _required_query(shape, keys, prefix=""):
    """Required members missing from every structure the flat keys reach (top level included)."""
    out = []
    by_wire = {_wire_name(n, m): (n, m) for n, m in shape.members.items()}
    for name in shape.required_members:
        wire = _wire_name(name, shape.members[name])
        if not any(k == prefix + wire or k.startswith(prefix + wire + ".") for k in keys):
            out.append(f"{prefix}{wire}")
    for wire, (_, m) in by_wire.items():
        if m.type_name == "structure" and any(k.startswith(prefix + wire + ".") for k in keys):
            out += _required_query(m, keys, prefix + wire + ".")
    return out


def _judge_query(model, x):
    from urllib.parse import parse_qsl

    params = dict(parse_qsl(x["body"], keep_blank_values=True)) if isinstance(x.get("body"), str) else {}
    action = params.pop("Action", None)
    params.pop("Version", None)
    if action not in model.operation_names:
        return action or "?", [_f("request", x["method"], action or "?", "Action", "not an operation of the model")]
    shape = model.operation_model(action).input_shape
    out = []
    for k, v in sorted(params.items()):
        rule = _walk_query(shape, k.split("."), v)
        if rule:
            out.append(_f("request", "POST", action, "params." + ".".join("N" if p.isdigit() else p for p in k.split(".")), rule))
    out += [_f("request", "POST", action, f"params.{m}", "required") for m in _required_query(shape, list(params))]
    return action, out


def _xml_name(name, member):
    return member.serialization.get("name") or name


def _local(tag):
    return tag.split("}", 1)[-1]


def _walk_xml(shape, el, at):
    """(at, rule) for each element under `el` that breaks `shape` (EC2's XML: lists of <item>)."""
    t = shape.type_name
    if t == "structure":
        by_xml = {_xml_name(n, m): m for n, m in shape.members.items()}
        out = []
        for child in el:
            name = _local(child.tag)
            m = by_xml.get(name)
            out += [(f"{at}.{name}", "unknown member")] if m is None else _walk_xml(m, child, f"{at}.{name}")
        return out
    if t == "list":
        out = []
        for child in el:
            if _local(child.tag) != shape.member.serialization.get("name", "item"):
                out.append((f"{at}.{_local(child.tag)}", "not a list item"))
            else:
                out += _walk_xml(shape.member, child, f"{at}[]")
        return out
    if len(el):
        return [(at, f"{t} given members")]
    text = el.text or ""
    if t == "timestamp":
        from datetime import datetime

        try:
            datetime.fromisoformat(text.replace("Z", "+00:00"))
            return []
        except ValueError:
            return [(at, "type timestamp")]
    rule = _scalar(shape, text)
    return [(at, rule)] if rule else []


def _judge_query_answer(model, action, x):
    import xml.etree.ElementTree as ET

    r = x.get("response")
    if not r or not (200 <= r["status"] < 300) or not isinstance(r.get("body"), str):
        return []
    root = ET.fromstring(r["body"])
    if _local(root.tag) != f"{action}Response":
        return [_f("answer", "POST", action, f"{r['status']} body", f"root {_local(root.tag)}, expected {action}Response")]
    shape = model.operation_model(action).output_shape
    kids = [c for c in root if _local(c.tag) != "requestId"]
    found = _walk_xml(shape, kids, f"{r['status']} body") if shape is not None else []
    return [_f("answer", "POST", action, a, rule) for a, rule in found]


# --- JSON 1.1 -------------------------------------------------------------------------------------

def _walk_json(shape, value, at):
    t = shape.type_name
    if t == "structure":
        if not isinstance(value, dict):
            return [(at, "type structure")]
        out = [(f"{at}.{k}", "unknown member") for k in value if k not in shape.members]
        out += [(f"{at}.{k}", "required") for k in shape.required_members if k not in value]
        for k, v in value.items():
            if k in shape.members and v is not None:
                out += _walk_json(shape.members[k], v, f"{at}.{k}")
        return out
    if t == "list":
        if not isinstance(value, list):
            return [(at, "type list")]
        return [e for v in value for e in _walk_json(shape.member, v, f"{at}[]")]
    if t == "map":
        if not isinstance(value, dict):
            return [(at, "type map")]
        return [e for v in value.values() for e in _walk_json(shape.value, v, f"{at}{{}}")]
    rule = _scalar(shape, value)
    return [(at, rule)] if rule else []


def _judge_json(model, x, counts):
    target = (x.get("headers") or {}).get("x-amz-target", "")
    op_name = target.split(".")[-1]
    if op_name not in model.operation_names:
        return op_name or "?", [_f("request", x["method"], op_name or "?", "X-Amz-Target", "not an operation of the model")]
    op = model.operation_model(op_name)
    out = [_f("request", "POST", op_name, at, rule) for at, rule in _walk_json(op.input_shape, x.get("body") or {}, "body")]
    r = x.get("response")
    if r:
        counts["answers"] += 1
        if 200 <= r["status"] < 300:
            out += [_f("answer", "POST", op_name, at, rule) for at, rule in _walk_json(op.output_shape, r.get("body") or {}, f"{r['status']} body")]
        else:
            code = (r.get("body") or {}).get("__type", "").split("#")[-1]
            declared = {s.name for s in op.error_shapes}
            if code and code not in declared and code not in COMMON_ERRORS:
                out.append(_f("answer", "POST", op_name, f"{r['status']} __type", f"error {code} not declared ({sorted(declared)})"))
    return op_name, out


# Errors every AWS JSON service may answer (the SDKs' common list; botocore models declare them per service only sometimes).
COMMON_ERRORS = {"ThrottlingException", "AccessDeniedException", "UnrecognizedClientException", "ValidationException", "InternalFailure"}


def judge_botocore(kind, source, exchanges):
    model = _model(source["service"])
    counts = {"answers": 0}
    out, requests = [], 0
    for x in exchanges:
        requests += 1
        if kind == "botocore-query":
            action, found = _judge_query(model, x)
            if x.get("response") and action in model.operation_names:
                counts["answers"] += 1
                found += _judge_query_answer(model, action, x)
        else:
            _, found = _judge_json(model, x, counts)
        for f in found:
            if f not in out:
                out.append(f)
    api = model.metadata.get("apiVersion", "?")
    spec = f"{source['service']} {api} (botocore=={botocore.__version__} service model)"
    return spec, out, requests, counts["answers"]
