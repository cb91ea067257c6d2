"""AWS Service Quotas: boto3's `service-quotas` client against our fixture
(test/fixtures/aws/service-quotas.ts; moto serves only `vpc` codes), for the ec2 vCPU quota codes
our adapter reads. The answer must parse with the asked code and limit, and the fixture's errors
must reach boto3 as the codes AWS documents."""
import boto3
from botocore.exceptions import ClientError

from _driver import Driver, need

d = Driver("boto3")


def client(region):
    return boto3.client(
        "service-quotas",
        region_name=region,
        endpoint_url=d.url,
        aws_access_key_id="AKIDCONTRACT",
        aws_secret_access_key="contract-secret",
    )


def get_service_quota(q):
    out = client(q["region"]).get_service_quota(ServiceCode="ec2", QuotaCode=q["code"])
    quota = need(out.get("Quota"), "a Quota")
    need(quota["QuotaCode"] == q["code"], f"the asked code, got {quota['QuotaCode']}")
    need(quota["Value"] == q["value"], f"limit {q['value']}, got {quota['Value']}")
    need(quota["ServiceCode"] == "ec2", "service ec2")
    need(quota["UsageMetric"]["MetricDimensions"]["Resource"] == "vCPU", "a vCPU usage metric")
    return True


def error(q):
    try:
        client(q["region"]).get_service_quota(ServiceCode="ec2", QuotaCode=q["code"])
    except ClientError as e:
        need(e.response["Error"]["Code"] == q["error"], f"error {q['error']}, got {e.response['Error']['Code']}")
        return True
    raise AssertionError(f"expected {q['error']}, got an answer")


for q in d.input["queries"]:
    name = f"get-service-quota {q['region']} {q['code']}"
    if "error" in q:
        d.call(f"{name} -> {q['error']}", lambda q=q: error(q))
    else:
        d.call(name, lambda q=q: get_service_quota(q))
d.done()
