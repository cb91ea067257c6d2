"""Google API Discovery judge (spec_judge.py `discovery`): the document google-api-python-client
ships, its schemas turned into JSON Schema draft 4 (`$ref: "Instance"` becomes `#/schemas/Instance`)."""
import json

import jsonschema

from spec_common import best_template, coerce, finding, media, schema_findings


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



def load_discovery(source):
    """The Discovery document google-api-python-client ships (`googleapiclient/discovery_cache`)."""
    from googleapiclient.discovery_cache import get_static_doc

    text = get_static_doc(source["api"], source["version"])
    if text is None:
        raise ModuleNotFoundError(name=f"google-api-python-client's {source['api']}.{source['version']} document")
    return json.loads(text)
