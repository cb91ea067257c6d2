"""GCP Cloud Billing Catalog through Google's `google-cloud-billing` (billing_v1 CloudCatalogClient,
REST transport) against our fixture (test/fixtures/gcp/billing.ts): `list_skus` for Compute Engine
with the currency and page size our adapter asks for, through every page. The client parses each
page into its proto-plus messages, so a field of the wrong JSON type or a missing page token fails here.
"""
from google.api_core.client_options import ClientOptions
from google.cloud import billing_v1
from google.oauth2.credentials import Credentials

from _driver import Driver, need

d = Driver("google-cloud-billing")
client = billing_v1.CloudCatalogClient(
    transport="rest",
    credentials=Credentials(token="contract-token"),
    client_options=ClientOptions(api_endpoint=d.url),
)


def list_skus():
    req = billing_v1.ListSkusRequest(parent="services/6F81-5844-456A", currency_code="USD", page_size=d.input["pageSize"])
    skus = list(client.list_skus(request=req))
    need(len(skus) == d.input["skus"], f"{d.input['skus']} SKUs through every page, got {len(skus)}")
    need(all(s.pricing_info[0].pricing_expression.tiered_rates[0].unit_price.currency_code == "USD" for s in skus), "USD prices")
    return True


d.call("list-skus", list_skus)
d.done()
