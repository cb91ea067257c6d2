"""Judges recorded HTTP exchanges (our adapter's requests, our fixtures' answers) against a vendor's
published API definition, with `jsonschema` / `openapi-schema-validator` doing the schema work:

- `openapi`: an OpenAPI 3.0/3.1 document (a file path; external `$ref`s next to it are inlined);
- `discovery`: a Google API Discovery document as google-api-python-client ships it;
- `botocore-query` / `botocore-json`: a botocore service model (spec_botocore.py).

Input (stdin, JSON): {kind, source, exchanges: [{method, path, query, headers, body, response}]}.
Output (one JSON line): {spec, version, requests, answers, findings: [{where, method, template, at, rule}]}.
A finding is one place where the exchange breaks the definition; the TypeScript side decides which
are accepted (test/contract/spec-accepted.ts).
"""
import importlib.metadata
import json
import os
import sys

import jsonschema

from spec_botocore import judge_botocore


def finding(where, method, template, at, rule):
    return {"where": where, "method": method, "template": template, "at": at, "rule": rule}


def at_of(prefix, path):
    """`body.droplets[].networks`: a JSON path with array indices folded (stable across data)."""
    out = prefix
    for p in path:
        out += "[]" if isinstance(p, int) else f".{p}"
    return out


def rule_of(err):
    """The broken rule without the offending value (so a key stays stable across runs)."""
    v = err.validator
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return f"required {missing}"
    if v in ("type", "enum", "format", "const"):
        return f"{v} {json.dumps(err.validator_value, sort_keys=True)}"
    if v == "additionalProperties":
        return f"additionalProperties {err.message.split('(')[-1].rstrip(')')}"
    return f"{v} {err.message[:120]}"


def schema_findings(validator_cls, root, schema, value, where, method, template, prefix):
    wrapped = {"allOf": [schema], **root}
    v = validator_cls(wrapped)
    seen = []
    for err in v.iter_errors(value):
        leaves = [err]
        if err.context:  # anyOf/oneOf: report the best branch's leaves
            leaves = [jsonschema.exceptions.best_match(err.context)]
        for e in leaves:
            f = finding(where, method, template, at_of(prefix, e.absolute_path), rule_of(e))
            if f not in seen:
                seen.append(f)
    return seen


# --- path templates ------------------------------------------------------------------------------

def segs(p):
    p = p.split("?")[0]
    return [s for s in p.strip("/").split("/")]


def fits(template, path):
    a, b = segs(template), segs(path)
    return len(a) == len(b) and all(x == y or (x.startswith("{") and x.endswith("}")) for x, y in zip(a, b))


def best_template(templates, path):
    """The matching template with the most literal segments (`/instances/status` over `/instances/{id}`)."""
    hits = [t for t in templates if fits(t, path)]
    return max(hits, key=lambda t: sum(not s.startswith("{") for s in segs(t)), default=None)


# --- OpenAPI ---------------------------------------------------------------------------------------
# A definition may span files (DigitalOcean's does): every object is read through a Node that knows
# its file and JSON pointer, and schemas are validated by reference (`file://<file>#<pointer>`) with
# a registry that loads the other files on demand, so no document is ever inlined.

def _escape(key):
    return str(key).replace("~", "~0").replace("/", "~1")


class Node:
    def __init__(self, spec, file, ptr, value):
        self.spec, self.file, self.ptr, self.value = spec, file, ptr, value

    def deref(self):
        n = self
        for _ in range(20):
            ref = n.value.get("$ref") if isinstance(n.value, dict) else None
            if not isinstance(ref, str):
                return n
            file, _, pointer = ref.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(n.file), file)) if file else n.file
            value = n.spec.load(target)
            for part in [p for p in pointer.split("/") if p]:
                value = value[part.replace("~1", "/").replace("~0", "~")]
            n = Node(n.spec, target, pointer, value)
        return n

    def get(self, key, default=None):
        d = self.deref()
        if not isinstance(d.value, dict) or key not in d.value:
            return default
        return Node(d.spec, d.file, f"{d.ptr}/{_escape(key)}", d.value[key]).deref()

    def items(self):
        d = self.deref()
        return [(k, d.get(k)) for k in (d.value or {})] if isinstance(d.value, dict) else []

    def list(self):
        d = self.deref()
        return [Node(d.spec, d.file, f"{d.ptr}/{i}", v).deref() for i, v in enumerate(d.value or [])]

    def uri(self):
        return f"file://{self.file}#{self.ptr}"


class OpenApiSpec:
    def __init__(self, path):
        self.files = {}
        self.root_file = os.path.abspath(path)
        self.doc = self.load(self.root_file)
        self.root = Node(self, self.root_file, "", self.doc)
        from openapi_schema_validator import OAS30Validator, OAS31Validator
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT4, DRAFT202012

        v31 = str(self.doc.get("openapi", "")).startswith("3.1")
        self.cls = OAS31Validator if v31 else OAS30Validator
        draft = DRAFT202012 if v31 else DRAFT4
        self.registry = Registry(retrieve=lambda uri: Resource.from_contents(self.load(uri[len("file://"):]), default_specification=draft))

    def load(self, file):
        if file not in self.files:
            import yaml  # PyYAML: a dependency of the vendor clients' venv

            with open(file, encoding="utf-8") as f:
                self.files[file] = yaml.safe_load(f) if file.endswith((".yaml", ".yml")) else json.load(f)
        return self.files[file]

    def findings(self, node, value, where, method, template, prefix):
        v = self.cls({"$ref": node.uri()}, registry=self.registry)
        seen = []
        for err in v.iter_errors(value):
            e = jsonschema.exceptions.best_match(err.context) if err.context else err
            f = finding(where, method, template, at_of(prefix, e.absolute_path), rule_of(e))
            if f not in seen:
                seen.append(f)
        return seen


def server_prefix(doc):
    from urllib.parse import urlparse

    url = (doc.get("servers") or [{}])[0].get("url", "")
    return urlparse(url).path.rstrip("/")


def media(ct):
    return (ct or "").split(";")[0].strip().lower()


def content_for(content, ct):
    m = media(ct)
    for key, _ in content.items() if content else []:
        k = key.lower()
        if k == m or k == "*/*" or (k.endswith("/*") and m.startswith(k[:-1])):
            return key
    return None


def coerce(value, schema):
    t = schema.get("type") if isinstance(schema, dict) else None
    t = t[0] if isinstance(t, list) else t
    try:
        if t == "integer":
            return int(value)
        if t == "number":
            return float(value)
        if t == "boolean":
            return {"true": True, "false": False}.get(value, value)
    except ValueError:
        return value
    return value


def guarded(fn, spec, template, op, x):
    """A definition the validator cannot read at this operation is a finding too, not a crash."""
    try:
        return fn(spec, template, op, x)
    except Exception as e:  # noqa: BLE001
        return [finding("request", x["method"], template, "definition", f"unreadable: {type(e).__name__}: {str(e)[:160]}")]


def judge_openapi(spec, exchanges):
    prefix = server_prefix(spec.doc)
    paths = spec.root.get("paths")
    out, requests, answers = [], 0, 0
    for x in exchanges:
        method = x["method"].lower()
        path = x["path"]
        if prefix and path.startswith(prefix + "/"):
            path = path[len(prefix):]
        template = best_template(spec.doc["paths"].keys(), path)
        op = paths.get(template).get(method) if template else None
        if op is None:
            out.append(finding("request", x["method"], template or path, "operation", "not in the spec"))
            continue
        requests += 1
        out += guarded(judge_openapi_request, spec, template, op, x)
        if x.get("response"):
            answers += 1
            out += guarded(judge_openapi_answer, spec, template, op, x)
    return out, requests, answers


def judge_openapi_request(spec, template, op, x):
    out = []
    shared = spec.root.get("paths").get(template).get("parameters")
    params = (shared.list() if shared else []) + (op.get("parameters").list() if op.get("parameters") else [])
    query = {}
    for k, v in x.get("query", []):
        query.setdefault(k, []).append(v)
    for p in params:
        if p.value.get("in") != "query":
            continue
        name = p.value["name"]
        schema = p.get("schema")
        if name not in query:
            if p.value.get("required"):
                out.append(finding("request", x["method"], template, f"query.{name}", "required"))
            continue
        if schema is None:
            continue
        sv = schema.value
        items = schema.get("items")
        value = [coerce(v, items.value if items else {}) for v in query[name]] if sv.get("type") == "array" else coerce(query[name][0], sv)
        out += spec.findings(schema, value, "request", x["method"], template, f"query.{name}")
    body_spec = op.get("requestBody")
    if x.get("body") is None:
        if body_spec is not None and body_spec.value.get("required"):
            out.append(finding("request", x["method"], template, "body", "required"))
        return out
    if body_spec is None:
        return out
    ct = (x.get("headers") or {}).get("content-type", "application/json")
    content = body_spec.get("content")
    key = content_for(content, ct)
    if key is None:
        return out + [finding("request", x["method"], template, "content-type", f"{media(ct)} not in {sorted(content.value) if content else []}")]
    schema = content.get(key).get("schema")
    if schema is not None:
        out += spec.findings(schema, x["body"], "request", x["method"], template, "body")
    return out


def judge_openapi_answer(spec, template, op, x):
    r = x["response"]
    status = str(r["status"])
    responses = op.get("responses")
    rs = responses.get(status) or responses.get(f"{status[0]}XX") or responses.get("default")
    if rs is None:
        return [finding("answer", x["method"], template, "status", f"{status} not in {sorted(responses.value)}")]
    content = rs.get("content")
    if content is None or r.get("body") is None:
        return []
    key = content_for(content, r.get("contentType"))
    if key is None:
        return [finding("answer", x["method"], template, f"{status} content-type", f"{media(r.get('contentType'))} not in {sorted(content.value)}")]
    schema = content.get(key).get("schema")
    if schema is None:
        return []
    return spec.findings(schema, r["body"], "answer", x["method"], template, f"{status} body")


# --- Google Discovery ------------------------------------------------------------------------------

def discovery_schema(node):
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out[k] = f"#/schemas/{v}"
            elif k == "type" and v == "any":
                continue
            elif k in ("id", "description", "annotations", "enumDescriptions", "enumDeprecated", "deprecated"):
                continue
            else:
                out[k] = discovery_schema(v)
        return out
    if isinstance(node, list):
        return [discovery_schema(v) for v in node]
    return node


def discovery_methods(resources):
    for r in (resources or {}).values():
        yield from (r.get("methods") or {}).values()
        yield from discovery_methods(r.get("resources"))


def judge_discovery(doc, exchanges):
    cls = jsonschema.Draft4Validator
    root = {"schemas": discovery_schema(doc["schemas"])}
    base = "/" + doc["servicePath"].strip("/")
    methods = {}
    for m in discovery_methods(doc.get("resources")):
        methods[(m["httpMethod"], f"{base}/{m.get('flatPath') or m['path']}")] = m
    out, requests, answers = [], 0, 0
    for x in exchanges:
        template = best_template([t for (hm, t) in methods if hm == x["method"]], x["path"])
        m = methods.get((x["method"], template))
        if m is None:
            out.append(finding("request", x["method"], x["path"], "operation", "not in the discovery document"))
            continue
        requests += 1
        for k, v in x.get("query", []):
            p = (m.get("parameters") or {}).get(k) or (doc.get("parameters") or {}).get(k)
            if p and p.get("location") == "query":
                s = discovery_schema({k2: v2 for k2, v2 in p.items() if k2 in ("type", "enum")})
                out += schema_findings(cls, root, s, coerce(v, s), "request", x["method"], template, f"query.{k}")
        if x.get("body") not in (None, "") and m.get("request"):
            out += schema_findings(cls, root, {"$ref": f"#/schemas/{m['request']['$ref']}"}, x["body"], "request", x["method"], template, "body")
        r = x.get("response")
        if r:
            answers += 1
            if 200 <= r["status"] < 300 and m.get("response"):
                if media(r.get("contentType")) != "application/json":
                    out.append(finding("answer", x["method"], template, "content-type", f"{media(r.get('contentType'))} not application/json"))
                else:
                    ref = {"$ref": f"#/schemas/{m['response']['$ref']}"}
                    out += schema_findings(cls, root, ref, r["body"], "answer", x["method"], template, f"{r['status']} body")
    return out, requests, answers


# --- entry -----------------------------------------------------------------------------------------

def load_discovery(source):
    """The Discovery document google-api-python-client ships (`googleapiclient/discovery_cache`)."""
    from googleapiclient.discovery_cache import get_static_doc

    text = get_static_doc(source["api"], source["version"])
    if text is None:
        raise ModuleNotFoundError(name=f"google-api-python-client's {source['api']}.{source['version']} document")
    return json.loads(text)


def main():
    data = json.load(sys.stdin)
    try:
        run(data)
    except ModuleNotFoundError as e:
        print(json.dumps({"missing": f"python package {e.name} not installed (test/contract/requirements.txt)"}))


def run(data):
    kind, source, exchanges = data["kind"], data["source"], data["exchanges"]
    if kind == "openapi":
        spec_doc = OpenApiSpec(source["path"])
        doc = spec_doc.doc
        findings, req, ans = judge_openapi(spec_doc, exchanges)
        spec = f"{doc['info'].get('title', 'OpenAPI')} {doc['info'].get('version', '?')} ({source.get('label', os.path.basename(source['path']))})"
        version = f"openapi-schema-validator {importlib.metadata.version('openapi-schema-validator')}"
    elif kind == "discovery":
        doc = load_discovery(source)
        findings, req, ans = judge_discovery(doc, exchanges)
        pkg = importlib.metadata.version("google-api-python-client")
        spec = f"{doc['name']}.{doc['version']} discovery revision {doc.get('revision', '?')} (google-api-python-client=={pkg})"
        version = f"jsonschema {importlib.metadata.version('jsonschema')}"
    else:
        spec, findings, req, ans = judge_botocore(kind, source, exchanges)
        version = f"botocore {importlib.metadata.version('botocore')}"
    print(json.dumps({"spec": spec, "validator": version, "requests": req, "answers": ans, "findings": findings}))


if __name__ == "__main__":
    main()
