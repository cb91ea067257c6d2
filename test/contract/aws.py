"""AWS: our EC2 error fixtures (test/fixtures/aws/errors.ts: status + Query API XML body) through
botocore's own EC2 response parser, as boto3 would read them from EC2. Each must come back as an
error with the fixture's code and message. (The happy paths run against moto, which is built
for boto3; our adapter uses AWS's JavaScript SDK.)"""
import boto3
import botocore.session
from botocore.parsers import create_parser

from _driver import Driver, need

d = Driver("boto3")
d.note(f"botocore {botocore.__version__}, boto3 {boto3.__version__}")
model = botocore.session.get_session().get_service_model("ec2")
parser = create_parser(model.metadata["protocol"])
op = model.operation_model("RunInstances")


def parse(e):
    parsed = parser.parse({"status_code": e["status"], "headers": {}, "body": e["xml"].encode()}, op.output_shape)
    err = need(parsed.get("Error"), "an error")
    need(err.get("Code") == e["code"], f"code {err.get('Code')!r}, expected {e['code']!r}")
    need(err.get("Message") == e["message"], f"message {err.get('Message')!r}")
    need(parsed["ResponseMetadata"]["HTTPStatusCode"] == e["status"], "the status code")
    return True


for e in d.input["errors"]:
    d.call(f"error {e['code']}", lambda e=e: parse(e))
d.done()
