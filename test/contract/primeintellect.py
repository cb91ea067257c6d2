"""Prime Intellect through the official `prime` package (prime_cli.api: APIClient, AvailabilityClient,
PodsClient and their pydantic models), pointed at our fixture. The package has no SSH key calls.
"""
import os

from _driver import Driver, need

d = Driver("prime")
os.environ["PRIME_API_BASE_URL"] = d.url
os.environ["PRIME_API_KEY"] = d.cred["apiKey"]
from prime_cli.api.availability import AvailabilityClient  # noqa: E402 - reads the environment above
from prime_cli.api.client import APIClient  # noqa: E402
from prime_cli.api.pods import PodsClient  # noqa: E402

api = APIClient()
pods = PodsClient(api)

avail_q = dict(d.ours("availability")[0]["query"]) if d.ours("availability") else {}


offers = {}


def availability():
    found = AvailabilityClient(api).get(gpu_count=int(avail_q["gpu_count"]) if "gpu_count" in avail_q else None,
                                        gpu_type=avail_q.get("gpu_type"))
    need(found, "offers")
    offers.update({o.cloud_id: o for group in found.values() for o in group})
    return found


d.call("availability", availability)
# The package has no SSH key calls: its generic APIClient sends ours (so only the transport is the vendor's).
d.note("ssh keys go through prime's generic APIClient with our paths: the package has no SSH key calls")
keys_q = dict(d.ours("ssh-keys")[0]["query"]) if d.ours("ssh-keys") else {}
d.call("ssh-keys", lambda: need("data" in api.get("/ssh_keys", params=keys_q), "data"))
key = d.our_body("add-ssh-key")
key_id = d.call("add-ssh-key", lambda: api.post("/ssh_keys", json=key)["id"]) if key else None

b = d.our_body("create")
pod = None


def cli_pod_config(ours):
    """The body `prime pods create` builds (prime_cli/commands/pods.py), from our choices and the offer."""
    o = ours["pod"]
    offer = offers[o["cloudId"]]
    return {
        "pod": {
            "name": o.get("name"), "cloudId": o["cloudId"], "gpuType": offer.gpu_type, "socket": offer.socket,
            "gpuCount": o["gpuCount"], "diskSize": o.get("diskSize"), "vcpus": o.get("vcpus"), "memory": o.get("memory"),
            "image": o.get("image"), "dataCenterId": offer.data_center, "maxPrice": None, "country": None,
            "security": None, "jupyterPassword": None, "autoRestart": False, "customTemplateId": None,
            "envVars": [{"key": e["key"], "value": e["value"]} for e in o.get("envVars", [])],
        },
        "provider": {"type": offer.provider} if offer.provider else {},
        "disks": None,
        "team": None,
    }


if b and b.get("pod", {}).get("cloudId") in offers:
    pod = d.call("create", lambda: pods.create(cli_pod_config(b)))


def status_running():
    # As our adapter polls: the list, then the status of the pods it found.
    for _ in range(6):
        pods.list(offset=0, limit=100)
        st = [s for s in pods.get_status([pod.id]) if s.pod_id == pod.id]
        if st and st[0].status == "ACTIVE" and st[0].ssh_connection:
            return st
    raise AssertionError("never ACTIVE with an ssh connection after 6 status calls")


if pod:
    ours_list = dict(d.ours("list")[0]["query"]) if d.ours("list") else {}
    d.call("list", lambda: pods.list(offset=int(ours_list.get("offset", 0)), limit=int(ours_list.get("limit", 100))))
    d.call("status", status_running)
    d.call("delete", lambda: pods.delete(pod.id))
d.done()
