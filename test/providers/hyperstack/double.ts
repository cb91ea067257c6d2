/** The Hyperstack test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import { HyperstackProvider } from '../../../src/providers/hyperstack';
import { startHyperstackFixture, type HyperstackFixture } from '../../fixtures/hyperstack/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { routeArmer, wireDouble, type PlannedDouble } from '../double';

export type HyperstackDouble = PlannedDouble<HyperstackProvider, HyperstackFixture>;

export async function startHyperstackDouble(opts: { pageSize?: number } = {}): Promise<HyperstackDouble> {
  const server = await startHyperstackFixture();
  const make = (deployment: string): HyperstackProvider =>
    new HyperstackProvider({ apiKey: server.apiKey, baseUrl: server.url, deployment, ...(opts.pageSize ? { pageSize: opts.pageSize } : {}) });
  const provider = make(CONFORMANCE_DEPLOYMENT);
  const arm = routeArmer(
    'hyperstack',
    {
      plan: ['GET', '/core/flavors'],
      prepare: ['GET', '/core/environments'],
      create: ['POST', '/core/virtual-machines'],
      observe: ['GET', '/core/virtual-machines'],
      delete: ['GET', '/core/virtual-machines'],
      cleanup: undefined,
    },
    { Capacity: 'capacity', Quota: 'quota', Credentials: 'credentials', Transient: 'rate-limit' },
    server,
  );
  return {
    ...wireDouble(provider, server, arm),
    twin: make,
    request: { vmName: 'unused', gpu: { model: 'H100', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Credentials', primitive: 'plan' },
      { kind: 'Transient', primitive: 'observe' },
    ],
  };
}
