"""Vast.ai through the official `vastai` SDK (vastai.api.*), pointed at our fixture.

Inputs are what our adapter sent (the same ask, image, label, env and onstart script, and for a
spot life the bid search and the bid `price`), passed through the client's own parameters
(ssh/direct flags, env as a map, `offer_type`, `price`), so the client encodes them its way.
"""
from _driver import Driver, need
from vastai.api import instances, keys, offers
from vastai.api.client import VastClient

d = Driver("vastai")
c = VastClient(api_key=d.cred["apiKey"], server_url=d.url, retry=1)


def search_like(ours_search):
    """The client's search with our filters, market (`type`: on-demand, or bid for spot), order, limit and storage."""
    # Our filters only; the client adds its own defaults and order, and allocated_storage from `storage`.
    query = {k: v for k, v in ours_search.items() if isinstance(v, dict)}

    def search():
        found = offers.search_offers(c, query=query, offer_type=ours_search.get("type", "on-demand"), limit=ours_search.get("limit"),
                                     order=ours_search.get("order"), storage=ours_search.get("allocated_storage", 5.0))
        need(found and all("id" in o and "dph_total" in o for o in found), "offers carry id and dph_total")
        if ours_search.get("type") == "bid":
            need(all(isinstance(o.get("min_bid"), (int, float)) for o in found), "bid offers carry min_bid")
        return found

    return search


# One search per search of ours: with --spot the adapter also searches the bid (interruptible) market.
for ours_search in [q["body"] for q in d.ours("search")] or [{}]:
    d.call("search", search_like(ours_search))
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
        onstart_cmd=b["onstart"], cancel_unavail=b["cancel_unavail"], price=b.get("price"),
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
