"""Hyperstack (NexGen Cloud Infrahub) through its generated client `hyperstack`, pointed at our fixture.

The client is generated from Hyperstack's OpenAPI document: it deserializes only the status codes
the document lists (an answer in another 2xx code comes back as no data) into strict pydantic
models (a string where a number is documented fails).
"""
from _driver import Driver, need
import hyperstack
from hyperstack.api.environment_api import EnvironmentApi
from hyperstack.api.flavor_api import FlavorApi
from hyperstack.api.keypair_api import KeypairApi
from hyperstack.api.pricebook_api import PricebookApi
from hyperstack.api.virtual_machine_api import VirtualMachineApi
from hyperstack.models import CreateEnvironment, CreateInstancesPayload, ImportKeypairPayload

d = Driver("hyperstack")
conf = hyperstack.Configuration(host=d.url, api_key={"apiKey": d.cred["apiKey"]})
client = hyperstack.ApiClient(conf)
vm_api = VirtualMachineApi(client)


def data(resp, what):
    need(resp is not None, f"{what}: no data (status code not documented?)")
    return resp


d.call("flavors", lambda: need(data(FlavorApi(client).list_flavors(), "flavors").data, "flavors"))
d.call("pricebook", lambda: need(data(PricebookApi(client).get_pricebook(), "pricebook"), "prices"))
d.call("environments", lambda: data(EnvironmentApi(client).list_environments(), "environments"))
env = d.our_body("create-environment")
if env:
    d.call("create-environment", lambda: data(EnvironmentApi(client).create_environment(CreateEnvironment.from_dict(env)), "environment").environment.name)
d.call("keypairs", lambda: data(KeypairApi(client).list_key_pairs(), "keypairs"))
kp = d.our_body("create-keypair")
if kp:
    d.call("create-keypair", lambda: data(KeypairApi(client).import_key_pair(ImportKeypairPayload.from_dict(kp)), "keypair").keypair.name)

b = d.our_body("create")
created = None
if b:
    def create():
        r = data(vm_api.create_vms(CreateInstancesPayload.from_dict(b)), "create")
        need(r.instances and r.instances[0].id is not None, "the new VM's id")
        return r.instances[0].id
    created = d.call("create", create)


ours_list = dict(d.ours("list")[0]["query"]) if d.ours("list") else {}
list_args = {"search": b["name"] if b else None, "environment": b["environment_name"] if b else None}
if "page" in ours_list:
    list_args.update(page=1, page_size=int(ours_list.get("pageSize", 30)))
if "exact_environment_match" in ours_list:
    list_args["exact_environment_match"] = ours_list["exact_environment_match"] == "true"


def list_running():
    for _ in range(6):
        r = data(vm_api.list_vms(**list_args), "list")
        mine = [i for i in r.instances or [] if i.id == created]
        if mine and mine[0].status == "ACTIVE" and mine[0].floating_ip_status == "ATTACHED" and mine[0].floating_ip:
            return mine
    raise AssertionError("never ACTIVE with an attached floating IP after 6 lists")


if created is not None:
    d.call("list", list_running)
    d.call("delete", lambda: data(vm_api.delete_vm(created), "delete"))
d.done()
