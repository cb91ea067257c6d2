"""Judges recorded HTTP exchanges (our adapter's requests, our fixtures' answers) against a vendor's
published API definition, with `jsonschema` / `openapi-schema-validator` doing the schema work:

- `openapi`: an OpenAPI 3.0/3.1 document (a file path; `$ref`s into files beside it are followed), spec_openapi.py;
- `discovery`: a Google API Discovery document as google-api-python-client ships it, spec_discovery.py;
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


def main():
    data = json.load(sys.stdin)
    try:
        run(data)
    except ModuleNotFoundError as e:
        print(json.dumps({"missing": f"python package {e.name} not installed (test/contract/requirements.txt)"}))


def run(data):
    # Each judge is imported when needed: one whose package is missing is reported as `missing`, not a crash.
    kind, source, exchanges = data["kind"], data["source"], data["exchanges"]
    if kind == "openapi":
        from spec_openapi import OpenApiSpec, judge_openapi

        spec_doc = OpenApiSpec(source["path"])
        doc = spec_doc.doc
        findings, req, ans = judge_openapi(spec_doc, exchanges)
        spec = f"{doc['info'].get('title', 'OpenAPI')} {doc['info'].get('version', '?')} ({source.get('label', os.path.basename(source['path']))})"
        version = f"openapi-schema-validator {importlib.metadata.version('openapi-schema-validator')}"
    elif kind == "discovery":
        from spec_discovery import judge_discovery, load_discovery

        doc = load_discovery(source)
        findings, req, ans = judge_discovery(doc, exchanges)
        pkg = importlib.metadata.version("google-api-python-client")
        spec = f"{doc['name']}.{doc['version']} discovery revision {doc.get('revision', '?')} (google-api-python-client=={pkg})"
        version = f"jsonschema {importlib.metadata.version('jsonschema')}"
    else:
        from spec_botocore import judge_botocore

        spec, findings, req, ans = judge_botocore(kind, source, exchanges)
        version = f"botocore {importlib.metadata.version('botocore')}"
    print(json.dumps({"spec": spec, "validator": version, "requests": req, "answers": ans, "findings": findings}))


if __name__ == "__main__":
    main()
