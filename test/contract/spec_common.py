"""Shared by the spec judges: findings, stable JSON paths and rules, path templates, media types."""
import json

import jsonschema


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
    if v in ("type", "enum", "format", "const", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "pattern", "multipleOf"):
        return f"{v} {json.dumps(err.validator_value, sort_keys=True)}"
    if v == "additionalProperties":
        return f"additionalProperties {err.message.split('(')[-1].rstrip(')')}"
    return f"{v} {err.message[:120]}"


def schema_findings(validator_cls, root, schema, value, where, method, template, prefix):
    """Validate `value` against `schema`, whose `$ref`s point into `root` (e.g. `{"schemas": ...}`)."""
    return schema_errors(validator_cls({"allOf": [schema], **root}), value, where, method, template, prefix)


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


def media(ct):
    return (ct or "").split(";")[0].strip().lower()


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


def schema_errors(validator, value, where, method, template, prefix):
    """Findings of one validation, one per place and rule (anyOf/oneOf: the best branch's leaf)."""
    seen = []
    for err in validator.iter_errors(value):
        e = jsonschema.exceptions.best_match(err.context) if err.context else err
        f = finding(where, method, template, at_of(prefix, e.absolute_path), rule_of(e))
        if f not in seen:
            seen.append(f)
    return seen
