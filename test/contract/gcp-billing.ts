/**
 * GCP Cloud Billing Catalog: our pricing reader (src/providers/gcp/pricing.ts) and Google's
 * `google-cloud-billing` client each page through Compute Engine's SKUs at a fresh billing fixture;
 * the client must parse every page, and our requests' shape (method, path, query names, types and
 * values, auth scheme) must be the client's, up to the rows of known.ts.
 */
import { GcpPricing } from '../../src/providers/gcp/pricing';
import { allSkus, SKUS_PATH, startBillingFixture } from '../fixtures/gcp/billing';
import { judge, type CloudReport } from './check';
import { diffShapes, shapeOf, type CallRoute } from './shapes';
import { runDriver } from './vendor';

const ROUTE: CallRoute = { call: 'list-skus', method: 'GET', pattern: SKUS_PATH };
/** Small pages, so both clients follow `nextPageToken` through several. */
const PAGE_SIZE = 40;
const SHAPE = { values: ['query.currencyCode', 'query.pageSize'] };

export async function checkGcpBilling(): Promise<CloudReport & { pages: { ours: number; vendor: number } }> {
  const ours = await startBillingFixture();
  try {
    await new GcpPricing({ endpoint: ours.url, token: () => Promise.resolve('ours-token'), pageSize: PAGE_SIZE }).lookup(['us-central1'], []);
  } finally {
    await ours.close();
  }
  const vendor = await startBillingFixture();
  let r;
  try {
    r = await runDriver('gcp_billing.py', { url: vendor.url, pageSize: PAGE_SIZE, skus: allSkus().length });
  } finally {
    await vendor.close();
  }
  const failures = r.calls.filter((c) => !c.ok).map((c) => `the vendor's client rejected the fixture at ${c.call}: ${c.error ?? c.skipped ?? ''}`);
  const found = diffShapes('gcp-billing', ROUTE.call, shapeOf(ROUTE, ours.requests, SHAPE), shapeOf(ROUTE, vendor.requests, SHAPE));
  const j = judge('gcp-billing', found);
  return {
    cloud: 'gcp (billing catalog)',
    client: r.client,
    version: r.version,
    mismatches: j.mismatches,
    accepted: j.accepted,
    failures: [...failures, ...j.failures],
    notes: r.notes,
    pages: { ours: ours.pages(), vendor: vendor.pages() },
  };
}
