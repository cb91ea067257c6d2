"""AWS Price List: boto3's `pricing` client against our fixture (test/fixtures/aws/pricing.ts; moto
serves no `pricing`), with the GetProducts filters our adapter sends. The answer must parse, and
each product in `PriceList` must be the JSON document AWS publishes, with an hourly USD price."""
import json

import boto3

from _driver import Driver, need

d = Driver("boto3")
client = boto3.client(
    "pricing",
    region_name="us-east-1",
    endpoint_url=d.url,
    aws_access_key_id="AKIDCONTRACT",
    aws_secret_access_key="contract-secret",
)


def get_products(q):
    out = client.get_products(ServiceCode="AmazonEC2", Filters=q["filters"], MaxResults=10)
    products = [json.loads(p) for p in need(out.get("PriceList"), "a PriceList")]
    need(len(products) == 1, f"one product, got {len(products)}")
    attrs = products[0]["product"]["attributes"]
    need(attrs["instanceType"] == q["instanceType"], "the asked type")
    prices = [
        float(dim["pricePerUnit"]["USD"])
        for term in products[0]["terms"]["OnDemand"].values()
        for dim in term["priceDimensions"].values()
        if dim["unit"] == "Hrs"
    ]
    need(prices == [q["price"]], f"hourly USD {prices}, expected {q['price']}")
    return True


for q in d.input["queries"]:
    d.call(f"get-products {q['instanceType']}", lambda q=q: get_products(q))
d.done()
