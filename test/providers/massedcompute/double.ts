/** The Massed Compute test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import { MassedComputeProvider } from '../../../src/providers/massedcompute';
import { startMassedFixture, type MassedFixture } from '../../fixtures/massedcompute/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { routeArmer, wireDouble, type PlannedDouble } from '../double';

export type MassedComputeDouble = PlannedDouble<MassedComputeProvider, MassedFixture>;

export async function startMassedComputeDouble(): Promise<MassedComputeDouble> {
  const server = await startMassedFixture();
  const make = (deployment: string): MassedComputeProvider => new MassedComputeProvider({ token: server.token, baseUrl: server.url, deployment });
  const provider = make(CONFORMANCE_DEPLOYMENT);
  const arm = routeArmer(
    'massedcompute',
    {
      plan: ['GET', '/gpu-inventory'],
      prepare: ['GET', '/images'],
      create: ['POST', '/instance/launch'],
      observe: ['GET', '/instance'],
      delete: ['GET', '/instance'],
      cleanup: undefined,
    },
    { Capacity: 'capacity', Quota: 'quota', Credentials: 'credentials', Transient: 'rate-limit' },
    server,
  );
  return {
    ...wireDouble(provider, server, arm),
    twin: make,
    request: { vmName: 'unused', gpu: { model: 'L40', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Credentials', primitive: 'prepare' },
      { kind: 'Transient', primitive: 'delete' },
    ],
  };
}
