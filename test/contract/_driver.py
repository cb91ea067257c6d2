"""Shared by the per-cloud drivers: reads the test's input from stdin, runs named calls through
the vendor's client, and prints one JSON line with the client's version and each call's outcome.

A call fails when the vendor's client raises, i.e. it could not send the request or could not
accept the fixture's answer (status code, field types, missing required fields).
"""
import importlib.metadata
import json
import sys
import traceback


class Driver:
    def __init__(self, package):
        self.package = package
        self.input = json.load(sys.stdin)
        self.url = self.input["url"]
        self.cred = self.input.get("credentials", {})
        self.calls = []
        self.notes = []

    def ours(self, call):
        """The requests our adapter sent for `call` (method, path, query, body), first first."""
        return self.input.get("ours", {}).get(call, [])

    def our_body(self, call, default=None):
        reqs = self.ours(call)
        return reqs[0]["body"] if reqs else default

    def call(self, name, fn):
        """Run one call; record its outcome; return its result (None when it failed)."""
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001 - every failure of the vendor's client is the finding
            tb = traceback.extract_tb(e.__traceback__)
            where = f" at {tb[-1].filename.split('site-packages/')[-1]}:{tb[-1].lineno}" if tb else ""
            self.calls.append({"call": name, "ok": False, "error": f"{type(e).__name__}: {e}{where}"[:800]})
            return None
        self.calls.append({"call": name, "ok": True})
        return result

    def skip(self, name, why):
        self.calls.append({"call": name, "ok": False, "skipped": why})

    def note(self, text):
        self.notes.append(text)

    def done(self):
        version = importlib.metadata.version(self.package)
        print(json.dumps({"client": self.package, "version": version, "calls": self.calls, "notes": self.notes}))


def need(value, what):
    """Fail the current call with `what` when the vendor client's result lacks something; else return it."""
    if not value:
        raise AssertionError(what)
    return value
