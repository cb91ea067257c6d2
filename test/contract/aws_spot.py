"""AWS spot: our spot fixtures (test/fixtures/aws/spot.ts, EC2 Query API XML) through botocore's own
EC2 response parser, each read back with the values the fixture meant; and boto3's `ec2` client at
moto making our three spot calls (RunInstances with spot market options, DescribeSpotPriceHistory,
DescribeSpotInstanceRequests by request-id filter) with our values, noting the spot parameters it put
on the wire (`wire <Action> {...}`), for the test to compare with ours."""
import json
from datetime import datetime
from urllib.parse import parse_qsl

import boto3
import botocore.session
from botocore.parsers import create_parser

from _driver import Driver, need

d = Driver("boto3")
model = botocore.session.get_session().get_service_model("ec2")
parser = create_parser(model.metadata["protocol"])


def iso(v):
    return v.isoformat().replace("+00:00", "Z") if isinstance(v, datetime) else v


def read(a):
    op = model.operation_model(a["op"])
    parsed = parser.parse({"status_code": 200, "headers": {}, "body": a["xml"].encode()}, op.output_shape)
    need("Error" not in parsed, f"an answer, not {parsed.get('Error')}")
    if a["op"] == "DescribeSpotPriceHistory":
        got = [[p["AvailabilityZone"], p["InstanceType"], p["SpotPrice"], iso(p["Timestamp"])[:19]] for p in parsed["SpotPriceHistory"]]
    else:
        got = [[r["SpotInstanceRequestId"], r["InstanceId"], r["Status"]["Code"], iso(r["Status"]["UpdateTime"])[:19], r["State"]] for r in parsed["SpotInstanceRequests"]]
    need(got == a["expect"], f"read {got}, expected {a['expect']}")
    return True


for a in d.input["answers"]:
    d.call(f"parse {a['op']}", lambda a=a: read(a))

ours = d.input["ours"]
client = boto3.client("ec2", region_name="us-east-1", endpoint_url=d.url, aws_access_key_id="AKIDCONTRACT", aws_secret_access_key="contract-secret")
sent = {}


def record(request, **_):
    body = request.body.decode() if isinstance(request.body, bytes) else request.body or ""
    params = dict(parse_qsl(body))
    sent[params.get("Action")] = params


client.meta.events.register("before-send.ec2.*", record)


def values(params, prefix):
    """`Filter.1.Value.1=x` → the values under `prefix` in order (boto3 takes lists)."""
    n = len(prefix) + 1
    keys = sorted((k for k in params if k.startswith(prefix + ".") and k[n:].isdigit()), key=lambda k: int(k[n:]))
    return [params[k] for k in keys]


run = ours["RunInstances"]
d.call(
    "run-instances (spot)",
    lambda: need(
        client.run_instances(
            ImageId=run["ImageId"],
            InstanceType=run["InstanceType"],
            MinCount=1,
            MaxCount=1,
            InstanceMarketOptions={
                "MarketType": run["InstanceMarketOptions.MarketType"],
                "SpotOptions": {
                    "SpotInstanceType": run["InstanceMarketOptions.SpotOptions.SpotInstanceType"],
                    "InstanceInterruptionBehavior": run["InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior"],
                },
            },
        )["Instances"][0]["InstanceId"],
        "an instance id",
    ),
)
hist = ours["DescribeSpotPriceHistory"]
when = datetime.fromisoformat(hist["StartTime"].replace("Z", "+00:00"))
d.call(
    "describe-spot-price-history",
    lambda: client.describe_spot_price_history(
        InstanceTypes=values(hist, "InstanceType"),
        ProductDescriptions=values(hist, "ProductDescription"),
        StartTime=when,
        EndTime=when,
        MaxResults=int(hist["MaxResults"]),
    ),
)
reqs = ours["DescribeSpotInstanceRequests"]
d.call(
    "describe-spot-instance-requests",
    lambda: client.describe_spot_instance_requests(
        Filters=[{"Name": reqs["Filter.1.Name"], "Values": values(reqs, "Filter.1.Value")}], MaxResults=int(reqs["MaxResults"])
    ),
)
for action, params in sent.items():
    d.note("wire " + json.dumps({"action": action, "params": params}))
d.done()
