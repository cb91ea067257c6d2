"""Lambda Cloud through `lambda-cloud-api-client` (PyPI; its metadata names no author, home page or
repository: it is not published by Lambda, but generated from Lambda's OpenAPI document by
openapi-python-client). Its endpoint functions parse no bodies, so the answers are read with the
package's own models (Instance, InstanceType, SSHKey), which fail on a missing required field or
an unknown enum value.
"""
import json

from _driver import Driver, need
from lambda_cloud_api_client import AuthenticatedClient
from lambda_cloud_api_client.api.default import (add_ssh_key, instance_types, launch_instance, list_instances,
                                                 list_ssh_keys, terminate_instance)
from lambda_cloud_api_client.models import AddSSHKeyBody, Instance, InstanceType, LaunchInstanceBody, Region, SshKey
from lambda_cloud_api_client.models import TerminateInstanceBody

d = Driver("lambda-cloud-api-client")
c = AuthenticatedClient(base_url=d.url, token=d.cred["apiKey"], raise_on_unexpected_status=True)


def ok(resp, what):
    need(resp.status_code == 200, f"{what}: status {int(resp.status_code)}")
    return json.loads(resp.content)["data"]


def types():
    data = ok(instance_types.sync_detailed(client=c), "instance-types")
    for entry in data.values():
        InstanceType.from_dict(entry["instance_type"])
        [Region.from_dict(r) for r in entry["regions_with_capacity_available"]]
    return data


d.call("instance-types", types)
d.call("ssh-keys", lambda: [SshKey.from_dict(k) for k in ok(list_ssh_keys.sync_detailed(client=c), "ssh-keys")])
key = d.our_body("add-ssh-key")
if key:
    d.call("add-ssh-key", lambda: SshKey.from_dict(ok(add_ssh_key.sync_detailed(client=c, body=AddSSHKeyBody.from_dict(key)), "add-ssh-key")))

b = d.our_body("launch")
ids = None
if b:
    # The client's LaunchInstanceBody knows region, type, key names, file systems, quantity and name only.
    ids = d.call("launch", lambda: ok(launch_instance.sync_detailed(client=c, body=LaunchInstanceBody.from_dict(b)), "launch")["instance_ids"])


def list_active():
    for _ in range(6):
        mine = [Instance.from_dict(i) for i in ok(list_instances.sync_detailed(client=c), "list") if i["id"] in ids]
        if mine and str(mine[0].status) == "active" and mine[0].ip:
            return mine
    raise AssertionError("never active with an ip after 6 lists")


if ids:
    d.call("list", list_active)
    d.call("terminate", lambda: [Instance.from_dict(i) for i in ok(terminate_instance.sync_detailed(
        client=c, body=TerminateInstanceBody.from_dict({"instance_ids": ids})), "terminate")["terminated_instances"]])
d.done()
