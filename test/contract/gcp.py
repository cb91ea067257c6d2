"""GCP Compute Engine through Google's `google-cloud-compute` (compute_v1, REST transport), pointed
at our fixture with the same placeholder API key our adapter uses against fixtures. The client parses every answer into its proto-plus
messages, so a field of the wrong JSON type or an unknown enum value fails here.
"""
import json

from _driver import Driver, need
from google.api_core.client_options import ClientOptions
from google.api_core.exceptions import NotFound
from google.cloud import compute_v1

d = Driver("google-cloud-compute")
project = d.cred["project"]
kw = {"transport": "rest", "client_options": ClientOptions(api_endpoint=d.url, api_key="gpuprov-fixture-no-auth")}
zones = compute_v1.ZonesClient(**kw)
accel = compute_v1.AcceleratorTypesClient(**kw)
images = compute_v1.ImagesClient(**kw)
firewalls = compute_v1.FirewallsClient(**kw)
instances = compute_v1.InstancesClient(**kw)
zone_ops = compute_v1.ZoneOperationsClient(**kw)
global_ops = compute_v1.GlobalOperationsClient(**kw)
reservations = compute_v1.ReservationsClient(**kw)


def q(call, key, default=None):
    reqs = d.ours(call)
    return dict(reqs[0]["query"]).get(key, default) if reqs else default


def page_size(call):
    v = q(call, "maxResults")
    return int(v) if v else None




def parse(cls, body):
    """Our JSON body as the client's message (camelCase JSON names; an unknown field fails)."""
    return cls.from_json(json.dumps(body))


if d.ours("zones"):
    d.call("zones", lambda: need([z.name for z in zones.list(compute_v1.ListZonesRequest(project=project, max_results=page_size("zones")))], "zones"))
if d.ours("accelerators"):
    d.call("accelerators", lambda: need(list(accel.aggregated_list(compute_v1.AggregatedListAcceleratorTypesRequest(
        project=project, max_results=page_size("accelerators")))), "items"))
# Reserved capacity: the project's reservations, every answer parsed.
if d.ours("reservations"):
    d.call("reservations", lambda: need([r.name for _, scoped in reservations.aggregated_list(
        compute_v1.AggregatedListReservationsRequest(project=project, max_results=page_size("reservations")))
        for r in scoped.reservations], "a reservation"))
for r in d.ours("image-family")[:1]:
    parts = r["path"].split("/")
    d.call("image-family", lambda: need(images.get_from_family(project=parts[-5], family=parts[-1]).self_link, "selfLink"))


def absent_ok(fn):
    """A 404 is an answer the client understood (our adapter reads it as "not there yet")."""
    try:
        return fn()
    except NotFound:
        return None


for r in d.ours("firewall")[:1]:
    d.call("firewall", lambda: absent_ok(lambda: firewalls.get(project=project, firewall=r["path"].split("/")[-1])))
fw = d.our_body("create-firewall")
if fw:
    d.call("create-firewall", lambda: firewalls.insert(project=project, firewall_resource=parse(compute_v1.Firewall, fw)))

create = d.ours("create")
name = zone = op = None
if create:
    b = create[0]["body"]
    zone = create[0]["path"].split("/")[-2]
    name = b["name"]
    request_id = dict(create[0]["query"]).get("requestId")
    op = d.call("create", lambda: need(instances.insert(compute_v1.InsertInstanceRequest(
        project=project, zone=zone, request_id=request_id, instance_resource=parse(compute_v1.Instance, b))).name, "an operation"))


def running():
    flt = q("list", "filter")
    for _ in range(8):
        req = compute_v1.ListInstancesRequest(project=project, zone=zone, filter=flt, max_results=page_size("list"))
        mine = [i for i in instances.list(req) if i.name == name]
        if mine and mine[0].status == "RUNNING" and mine[0].network_interfaces[0].access_configs[0].nat_i_p:
            return mine
    raise AssertionError("never RUNNING with an external IP after 8 lists")


if op:
    if d.ours("operation"):
        d.call("operation", lambda: zone_ops.get(project=project, zone=zone, operation=op))
    if d.ours("operation-wait"):
        d.call("operation-wait", lambda: need(zone_ops.wait(project=project, zone=zone, operation=op).status, "status"))
    d.call("list", running)
    # Spot: the preemption lists (a preempted instance is recorded at this fixture), every answer parsed.
    for r in d.ours("zone-operations")[:1]:
        pz = r["path"].split("/")[-2]
        d.call("zone-operations", lambda: need([o for o in zone_ops.list(compute_v1.ListZoneOperationsRequest(
            project=project, zone=pz, filter=q("zone-operations", "filter"), max_results=page_size("zone-operations")))
            if o.operation_type == "compute.instances.preempted" and o.target_id and o.insert_time], "a preempted operation"))
    if d.ours("aggregated-operations"):
        d.call("aggregated-operations", lambda: need([o for _, scoped in global_ops.aggregated_list(
            compute_v1.AggregatedListGlobalOperationsRequest(project=project, filter=q("aggregated-operations", "filter"),
                                                             max_results=page_size("aggregated-operations")))
            for o in scoped.operations if o.operation_type == "compute.instances.preempted"], "a preempted operation"))
    if d.ours("get"):
        d.call("get", lambda: instances.get(project=project, zone=zone, instance=name))
    d.call("delete", lambda: instances.delete(project=project, zone=zone, instance=name).name)
for r in d.ours("delete-firewall")[:1]:
    d.call("delete-firewall", lambda: firewalls.delete(project=project, firewall=r["path"].split("/")[-1]))
d.done()
