"""AWS RunInstances with a user's image and root disk: boto3's `ec2` client against moto, with the
ImageId, instance type and BlockDeviceMappings our adapter sent (read back from its wire form, so a
field boto3 does not know fails its parameter validation). Notes the image and disk parameters
boto3 put on the wire (`wire {...}`), for the test to compare with ours."""
import json
from urllib.parse import parse_qsl

import boto3

from _driver import Driver, need

d = Driver("boto3")
ours = d.input["ours"]
client = boto3.client("ec2", region_name="us-east-1", endpoint_url=d.url, aws_access_key_id="AKIDCONTRACT", aws_secret_access_key="contract-secret")
sent = {}


def record(request, **_):
    body = request.body.decode() if isinstance(request.body, bytes) else request.body or ""
    sent.update(parse_qsl(body))


client.meta.events.register("before-send.ec2.RunInstances", record)


def scalar(v):
    return True if v == "true" else False if v == "false" else int(v) if v.isdigit() else v


def mappings(params):
    """`BlockDeviceMapping.1.Ebs.VolumeSize=120` → [{"Ebs": {"VolumeSize": 120}}] (boto3's names)."""
    out = {}
    for k, v in params.items():
        parts = k.split(".")
        if parts[0] != "BlockDeviceMapping":
            continue
        node = out.setdefault(int(parts[1]), {})
        for p in parts[2:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = scalar(v)
    return [out[i] for i in sorted(out)]


def run():
    out = client.run_instances(ImageId=ours["ImageId"], InstanceType=ours["InstanceType"], MinCount=1, MaxCount=1, BlockDeviceMappings=mappings(ours))
    return need(out["Instances"][0]["InstanceId"], "an instance id")


d.call("run-instances", run)
d.note("wire " + json.dumps({k: v for k, v in sent.items() if k == "ImageId" or k.startswith("BlockDeviceMapping.")}))
d.done()
