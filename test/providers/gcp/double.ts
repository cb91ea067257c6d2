/**
 * The GCP test double: the Compute fixture server plus a GcpProvider pointed at it.
 * Reused by the conformance battery, the adapter tests and the lead's failover workflow test.
 */
import type { ErrorKind } from '../../../src/core/errors';
import type { CloudProvider, ResourceRequest } from '../../../src/core/provider';
import { fromEnv } from '../../../src/providers/gcp';
import { HTTP_ERRORS } from '../../fixtures/gcp/bodies';
import { ROUTES, startGcpFixture, type GcpFixture, type ZoneFault } from '../../fixtures/gcp/server';
import { CONFORMANCE_DEPLOYMENT, type ConformanceEnv, type Primitive } from '../conformance';

export interface GcpDouble {
  provider: CloudProvider;
  server: GcpFixture;
  /** Instances alive at the fixture (not yet gone), across all VMs. */
  countLive(): Promise<number>;
  /** The adapter for another deployment on the same fixture. */
  twin(deployment: string): CloudProvider;
  /** Every insert in `zone` fails with `fault` until `server.disarmZone(zone)` (`late`: after that many RUNNING polls). */
  armZone(zone: string, fault: ZoneFault, late?: number): void;
  close(): Promise<void>;
}

/** Start the fixture and a provider built by `fromEnv` (endpoint override, no credentials). */
export async function startGcpDouble(opts: { regions?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<GcpDouble> {
  const server = await startGcpFixture();
  const make = (deployment: string): CloudProvider => {
    const env = {
      HOME: '/nonexistent-gpuprov-home',
      GOOGLE_CLOUD_PROJECT: server.project,
      GCP_COMPUTE_ENDPOINT: server.url,
      GCP_REGIONS: (opts.regions ?? ['us-central1']).join(','),
      ...opts.env,
    };
    const p = fromEnv(env, { deployment });
    if (!p) throw new Error('fromEnv returned no GCP provider for the fixture');
    return p;
  };
  return {
    provider: make(CONFORMANCE_DEPLOYMENT),
    twin: make,
    server,
    countLive: async () => server.instances.size,
    armZone: (zone, fault, late) => server.armZone(zone, fault, false, late),
    close: () => server.close(),
  };
}

/** T4:1 plans n1-standard-4 + a guest accelerator: the richest create body. */
export const GCP_REQUEST: ResourceRequest = { vmName: 'cf-gcp', gpu: { model: 'T4', count: 1 }, k8s: false };

/** The conformance environment over {@link startGcpDouble}. */
export async function gcpConformanceEnv(): Promise<ConformanceEnv> {
  const d = await startGcpDouble();
  const zone = 'us-central1-a'; // the first offer of GCP_REQUEST
  const once = (status: number, body: unknown, method: string, pattern: string, headers?: Record<string, string>): void =>
    d.server.http.arm({ status, body, method, pattern, ...(headers ? { headers } : {}) });
  const arms: Record<string, () => void> = {
    'Capacity/create': () => d.server.armZone(zone, 'exhausted', true),
    'Quota/create': () => d.server.armZone(zone, 'quota', true),
    'Unavailable/create': () => d.server.armZone(zone, 'notFound', true),
    'InvalidRequest/create': () => once(400, HTTP_ERRORS.invalidFieldValue('resource.machineType'), 'POST', ROUTES.instances),
    'Credentials/prepare': () => once(403, HTTP_ERRORS.forbidden(), 'GET', ROUTES.imageFamily),
    'Credentials/observe': () => once(401, HTTP_ERRORS.unauthenticated(), 'GET', ROUTES.instances),
    'Transient/observe': () => once(429, HTTP_ERRORS.rateLimit429(), 'GET', ROUTES.instances, { 'retry-after': '3' }),
    'Transient/delete': () => once(503, HTTP_ERRORS.backendError(), 'GET', ROUTES.instances),
    'Transient/cleanup': () => once(403, HTTP_ERRORS.rateLimit403(), 'DELETE', ROUTES.firewall),
  };
  const kinds = Object.keys(arms).map((k) => {
    const [kind, primitive] = k.split('/') as [ErrorKind, Primitive];
    return { kind, primitive };
  });
  return {
    provider: d.provider,
    request: GCP_REQUEST,
    countLive: () => d.countLive(),
    twin: (deployment) => d.twin(deployment),
    countSide: async () => d.server.firewalls.size,
    arm: async (kind, primitive) => {
      const arm = arms[`${kind}/${primitive}`];
      if (!arm) throw new Error(`gcp double cannot arm ${kind} at ${primitive}`);
      arm();
    },
    kinds,
    tick: async () => d.server.tick(),
    nativeIdempotency: true,
    maxPolls: 8,
    close: () => d.close(),
  };
}
