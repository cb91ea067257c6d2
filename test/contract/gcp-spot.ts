/**
 * GCP Spot VMs in the contract suite: our adapter's spot life (a spot offer priced from the
 * billing fixture, the SPOT insert, observe until running, a preemption, observe and inventory
 * reading the `compute.instances.preempted` operations, delete, cleanup) at a fresh Compute
 * fixture, then Google's `google-cloud-compute` client (gcp.py) making the same calls at another,
 * where a preempted instance is already recorded; our requests are diffed with the client's and
 * the client must parse every answer. `recordSpotLife` gives the spec judge the same exchanges.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { locationOf } from '../../src/core/offers';
import { ownedName } from '../../src/providers/deployment';
import { startBillingFixture } from '../fixtures/gcp/billing';
import { PREEMPTION_ROUTES } from '../fixtures/gcp/preemptions';
import { CONFORMANCE_DEPLOYMENT } from '../providers/conformance';
import { startGcpDouble, type GcpDouble } from '../providers/gcp/double';
import { checkHttpLife, SPEC, type CloudReport } from './check';
import { HTTP_CONTRACTS, type ContractEnv, type HttpContract } from './clouds';
import { toExchange, type Exchange } from './spec-check';

const GCP = HTTP_CONTRACTS.find((c) => c.cloud === 'gcp')!;
const MAX_POLLS = 10;

/** The gcp contract's calls plus the two preemption lists, its fixture with a billing fixture beside. */
function spotContract(): { contract: HttpContract; double: () => GcpDouble } {
  let current: GcpDouble | undefined;
  const contract: HttpContract = {
    ...GCP,
    routes: [
      ...GCP.routes,
      { call: 'zone-operations', method: 'GET', pattern: PREEMPTION_ROUTES.zoneOperations },
      { call: 'aggregated-operations', method: 'GET', pattern: PREEMPTION_ROUTES.aggregatedOperations },
    ],
    request: { ...GCP.request, spot: 'only' },
    start: async (): Promise<ContractEnv> => {
      const billing = await startBillingFixture();
      const dir = mkdtempSync(join(tmpdir(), 'gpuprov-gcp-spot-contract-'));
      const d = await startGcpDouble({ env: { GCP_BILLING_ENDPOINT: billing.url, GPUPROV_STATE_DIR: dir } });
      current = d;
      return {
        provider: d.provider,
        http: d.server.http,
        credentials: { project: d.server.project },
        close: async () => {
          await d.close();
          await billing.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
  return { contract, double: () => current! };
}

/** Our adapter's spot life at `env` (the double it runs on is `d`). */
async function spotLife(env: ContractEnv, d: GcpDouble, request: HttpContract['request']): Promise<void> {
  const p = env.provider;
  const offer = (await p.plan(request)).find((o) => o.market === 'spot');
  if (!offer) throw new Error('gcp: the fixtures planned no spot offer for the contract request');
  const at = locationOf(offer);
  const id = await p.create(offer, await p.prepare(offer, SPEC), SPEC);
  for (let i = 0; i < MAX_POLLS; i++) if ((await p.observe(at, SPEC.vmName)).some((o) => o.status === 'Running' && o.endpoint)) break;
  d.server.preempt(offer.zone!, ownedName(SPEC.vmName, CONFORMANCE_DEPLOYMENT));
  const seen = await p.observe(at, SPEC.vmName);
  if (!seen.some((o) => o.id === id && o.preemption)) throw new Error('gcp: observe did not report the preemption');
  const inv = await p.inventory({ cloud: 'gcp', region: offer.region });
  if (!inv.some((o) => o.id === id && o.preemption)) throw new Error('gcp: inventory did not report the preemption');
  await p.delete(at, SPEC.vmName, [id]);
  for (let i = 0; i < MAX_POLLS; i++) if ((await p.observe(at, SPEC.vmName)).length === 0) break;
  await p.cleanup(at, SPEC.vmName);
}

/** A preempted instance recorded at the vendor's fixture, so its operation lists answer one. */
function seedPreempted(d: GcpDouble): void {
  const name = 'gpuprov-seeded-preempted';
  d.server.seed('us-central1-a', name, { 'gpuprov-vm-name': 'seeded', 'gpuprov-owner': CONFORMANCE_DEPLOYMENT });
  d.server.preempt('us-central1-a', name);
}

export async function checkGcpSpot(): Promise<CloudReport> {
  const { contract, double } = spotContract();
  return checkHttpLife(contract, (env) => spotLife(env, double(), contract.request), {
    driver: 'gcp.py',
    label: 'gcp (spot)',
    before: () => seedPreempted(double()),
  });
}

/** The spot life's exchanges (requests and answers) at a fresh fixture, for the spec judge. */
export async function recordSpotLife(): Promise<Exchange[]> {
  const { contract, double } = spotContract();
  const env = await contract.start();
  try {
    await spotLife(env, double(), contract.request);
    return env.http.requests.map(toExchange);
  } finally {
    await env.close();
  }
}
