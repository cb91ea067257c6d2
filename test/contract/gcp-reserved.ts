/**
 * GCP reserved capacity in the contract suite: our adapter's life into a specific reservation
 * (the reservations list, the targeted insert, observe until running, delete, cleanup) and a
 * queued flex-start life (the FLEX_START insert, observe Pending until capacity comes, then
 * Running, delete) each at a fresh Compute fixture, then Google's `google-cloud-compute` client
 * (gcp.py) making the same calls at another; our requests are diffed with the client's and the
 * client must parse every answer. `recordReservedLives` gives the spec judge the same exchanges.
 */
import { locationOf } from '../../src/core/offers';
import type { ResourceRequest } from '../../src/core/provider';
import { ownedName } from '../../src/providers/deployment';
import { RESERVATION_ROUTES } from '../fixtures/gcp/reservations';
import { CONFORMANCE_DEPLOYMENT } from '../providers/conformance';
import { startGcpDouble, type GcpDouble } from '../providers/gcp/double';
import { checkHttpLife, exercise, SPEC, type CloudReport } from './check';
import { HTTP_CONTRACTS, type ContractEnv, type HttpContract } from './clouds';
import { toExchange, type Exchange } from './spec-check';

const GCP = HTTP_CONTRACTS.find((c) => c.cloud === 'gcp')!;
const MAX_POLLS = 10;
/** Observations a flex-start instance stays PENDING at the vendor client's fixture (its driver lists up to 8 times). */
const VENDOR_PENDING_LOOKS = 2;

export const RESERVED_REQUEST: ResourceRequest = { ...GCP.request, reserved: { kind: 'reservation', id: 'contract-rsv' } };
export const QUEUED_REQUEST: ResourceRequest = { ...GCP.request, gpu: { model: 'L4', count: 1 }, reserved: { kind: 'queue', waitMs: 900_000 } };

/** The gcp contract's calls plus the reservations list, at a fixture holding `contract-rsv` (T4, two machines). */
function reservedContract(request: ResourceRequest, vendorPendingLooks?: number): { contract: HttpContract; double: () => GcpDouble } {
  let current: GcpDouble | undefined;
  let started = 0;
  const contract: HttpContract = {
    ...GCP,
    routes: [...GCP.routes, { call: 'reservations', method: 'GET', pattern: RESERVATION_ROUTES.aggregated }],
    request,
    start: async (): Promise<ContractEnv> => {
      const d = await startGcpDouble();
      d.server.addReservation({
        name: 'contract-rsv',
        zone: 'us-central1-a',
        machineType: 'n1-standard-4',
        accelerators: [{ acceleratorType: 'nvidia-tesla-t4', acceleratorCount: 1 }],
        count: 2,
      });
      // The first fixture is ours (the test grants capacity); the second the vendor client's.
      if (started++ > 0 && vendorPendingLooks !== undefined) d.server.grantAfter(vendorPendingLooks);
      current = d;
      return { provider: d.provider, http: d.server.http, credentials: { project: d.server.project }, close: () => d.close() };
    },
  };
  return { contract, double: () => current! };
}

/** Our adapter's queued life at `env` (the double it runs on is `d`): Pending until granted, then Running, then gone. */
async function queuedLife(env: ContractEnv, d: GcpDouble): Promise<void> {
  const p = env.provider;
  const offer = (await p.plan(QUEUED_REQUEST)).find((o) => o.queued);
  if (!offer) throw new Error('gcp: the fixtures planned no queued offer for the contract request');
  const at = locationOf(offer);
  const id = await p.create(offer, await p.prepare(offer, SPEC), SPEC);
  if (!(await p.observe(at, SPEC.vmName)).some((o) => o.id === id && o.status === 'Pending')) throw new Error('gcp: a queued instance was not Pending');
  d.server.grant(offer.zone!, ownedName(SPEC.vmName, CONFORMANCE_DEPLOYMENT));
  for (let i = 0; i < MAX_POLLS; i++) if ((await p.observe(at, SPEC.vmName)).some((o) => o.status === 'Running' && o.endpoint)) break;
  await p.delete(at, SPEC.vmName, [id]);
  for (let i = 0; i < MAX_POLLS; i++) if ((await p.observe(at, SPEC.vmName)).length === 0) break;
  await p.cleanup(at, SPEC.vmName);
}

/** Our life into `contract-rsv` against google-cloud-compute's. */
export async function checkGcpReserved(): Promise<CloudReport> {
  const { contract } = reservedContract(RESERVED_REQUEST);
  return checkHttpLife(contract, (env) => exercise(env.provider, RESERVED_REQUEST), { driver: 'gcp.py', label: 'gcp (reservation)' });
}

/** Our queued flex-start life against google-cloud-compute's (whose fixture grants capacity by itself). */
export async function checkGcpQueued(): Promise<CloudReport> {
  const { contract, double } = reservedContract(QUEUED_REQUEST, VENDOR_PENDING_LOOKS);
  return checkHttpLife(contract, (env) => queuedLife(env, double()), { driver: 'gcp.py', label: 'gcp (flex-start)', also: 'gcp flex-start' });
}

/** One life's exchanges (requests and answers) at a fresh fixture. */
async function record(request: ResourceRequest, life: (env: ContractEnv, d: GcpDouble) => Promise<void>): Promise<Exchange[]> {
  const { contract, double } = reservedContract(request);
  const env = await contract.start();
  try {
    await life(env, double());
    return env.http.requests.map(toExchange);
  } finally {
    await env.close();
  }
}

/** Both lives' exchanges, for the spec judge. */
export async function recordReservedLives(): Promise<Exchange[]> {
  return [...(await record(RESERVED_REQUEST, (env) => exercise(env.provider, RESERVED_REQUEST))), ...(await record(QUEUED_REQUEST, queuedLife))];
}
