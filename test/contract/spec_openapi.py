"""OpenAPI 3.0/3.1 judge (spec_judge.py `openapi`): operations by path template, query parameters,
request bodies, answer statuses, media types and bodies, with openapi-schema-validator."""
import json
import os

from spec_common import best_template, coerce, finding, media, schema_errors


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
        return schema_errors(self.cls({"$ref": node.uri()}, registry=self.registry), value, where, method, template, prefix)


def server_prefix(doc):
    from urllib.parse import urlparse

    url = (doc.get("servers") or [{}])[0].get("url", "")
    return urlparse(url).path.rstrip("/")


def content_for(content, ct):
    m = media(ct)
    for key, _ in content.items() if content else []:
        k = key.lower()
        if k == m or k == "*/*" or (k.endswith("/*") and m.startswith(k[:-1])):
            return key
    return None


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
