"""Verda (ex DataCrunch) through the official `verda` client, pointed at our fixture. Asks for the
stocks our adapter asked for (on-demand, and spot in a spot life) and creates as it created."""
from _driver import Driver, need
from verda import VerdaClient
from verda.instances import OSVolume

d = Driver("verda")
c = d.call("token", lambda: VerdaClient(d.cred["clientId"], d.cred["clientSecret"], base_url=d.url))
if c is None:
    d.done()
    raise SystemExit(0)
# The client authenticates on construction; the token call is what the constructor sent.

d.call("instance-types", lambda: need(all(t.price_per_hour >= 0 and t.spot_price_per_hour >= 0 for t in c.instance_types.get()), "prices"))
spot_asked = sorted({dict(q["query"]).get("isSpot") == "true" for q in d.ours("availability")} or {False})
for is_spot in spot_asked:
    d.call("availability", lambda: need(isinstance(c.instances.get_availabilities(is_spot=is_spot), list), "a list"))
d.call("ssh-keys", lambda: c.ssh_keys.get())
key = d.our_body("add-ssh-key")
key_id = d.call("add-ssh-key", lambda: c.ssh_keys.create(key["name"], key["key"]).id) if key else None
d.call("scripts", lambda: c.startup_scripts.get())
script = d.our_body("add-script")
script_id = d.call("add-script", lambda: c.startup_scripts.create(script["name"], script["script"]).id) if script else None

b = d.our_body("create")
inst = None
if b:
    inst = d.call("create", lambda: c.instances.create(
        instance_type=b["instance_type"], image=b["image"], hostname=b["hostname"], description=b["description"],
        ssh_key_ids=[key_id] if key_id else b["ssh_key_ids"], location=b["location_code"],
        startup_script_id=script_id, is_spot=b.get("is_spot", False), wait_for_status=None,
        os_volume=OSVolume(**b["os_volume"]) if "os_volume" in b else None))


def list_running():
    for _ in range(6):
        mine = [i for i in c.instances.get() if i.id == inst.id]
        if mine and mine[0].status == "running" and mine[0].ip:
            need(mine[0].is_spot == b.get("is_spot", False), f"is_spot {mine[0].is_spot}, created {b.get('is_spot')}")
            return mine
    raise AssertionError("never running with an ip after 6 lists")


if inst:
    d.call("list", list_running)
    # The client's documented way to delete an instance with its OS volume.
    d.call("delete", lambda: c.instances.action([inst.id], "delete", volume_ids=[inst.os_volume_id], delete_permanently=True))
if script_id:
    d.call("delete-scripts", lambda: c.startup_scripts.delete([script_id]))
d.done()
