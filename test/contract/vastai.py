"""Vast.ai through the official `vastai` SDK (vastai.api.*), pointed at our fixture.

Inputs are what our adapter sent (the same ask, image, label, env and onstart script), passed
through the client's own parameters (ssh/direct flags, env as a map), so the client
encodes them its way.
"""
from _driver import Driver, need
from vastai.api import instances, keys, offers
from vastai.api.client import VastClient

d = Driver("vastai")
c = VastClient(api_key=d.cred["apiKey"], server_url=d.url, retry=1)

ours_search = d.our_body("search", {})
# Our filters only; the client adds its own defaults, type and order, and allocated_storage from `storage`.
query = {k: v for k, v in ours_search.items() if isinstance(v, dict)}


def search():
    found = offers.search_offers(c, query=query, limit=ours_search.get("limit"), order=ours_search.get("order"),
                                 storage=ours_search.get("allocated_storage", 5.0))
    need(found and all("id" in o and "dph_total" in o for o in found), "offers carry id and dph_total")
    return found


d.call("search", search)
ours_key = (d.our_body("add-ssh-key") or {}).get("ssh_key")
d.call("ssh-keys", lambda: need(isinstance(keys.show_ssh_keys(c), (list, dict)), "a key list"))
if ours_key:
    d.call("add-ssh-key", lambda: need(keys.create_ssh_key(c, ours_key).get("success") is not False, "success"))
else:
    d.skip("add-ssh-key", "our adapter added no key")

create = d.ours("create")
new_id = None
if create:
    b = create[0]["body"]
    ask = int(create[0]["path"].rstrip("/").split("/")[-1])
    r = d.call("create", lambda: instances.create_instance(
        c, ask, image=b["image"], disk=b["disk"], env=b["env"], label=b["label"],
        onstart_cmd=b["onstart"], cancel_unavail=b["cancel_unavail"],
        ssh=True, direct="ssh_direc" in b["runtype"].split()))
    new_id = r and r.get("new_contract")
else:
    d.skip("create", "our adapter created nothing")


def list_running():
    for _ in range(6):
        rows = instances.show_instances(c, select_filters={"label": {"eq": create[0]["body"]["label"]}})
        if rows and rows[0].get("actual_status") == "running":
            return rows
    raise AssertionError("never running after 6 lists")


if new_id:
    d.call("list", list_running)
    d.call("delete", lambda: instances.destroy_instance(c, new_id))
d.done()
