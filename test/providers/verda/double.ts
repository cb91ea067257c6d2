/** The Verda test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import { VerdaProvider } from '../../../src/providers/verda';
import { startVerdaFixture, type VerdaFixture } from '../../fixtures/verda/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { routeArmer, wireDouble, type PlannedDouble } from '../double';

export type VerdaDouble = PlannedDouble<VerdaProvider, VerdaFixture>;

export async function startVerdaDouble(): Promise<VerdaDouble> {
  const server = await startVerdaFixture();
  const make = (deployment: string): VerdaProvider =>
    new VerdaProvider({ clientId: server.clientId, clientSecret: server.clientSecret, baseUrl: server.url, deployment });
  const provider = make(CONFORMANCE_DEPLOYMENT);
  const arm = routeArmer(
    'verda',
    {
      plan: ['GET', '/instance-types'],
      prepare: ['GET', '/sshkeys'],
      create: ['POST', '/instances'],
      observe: ['GET', '/instances'],
      delete: ['GET', '/instances'],
      cleanup: ['GET', '/scripts'],
    },
    { Capacity: 'capacity', Quota: 'quota', Credentials: 'credentials', Transient: 'server-error' },
    server,
  );
  return {
    ...wireDouble(provider, server, (kind, primitive) => {
      arm(kind, primitive);
      // A 401 makes the adapter refresh its token and repeat the call once: refuse that one too.
      if (kind === 'Credentials') arm(kind, primitive);
    }),
    twin: make,
    countSide: async () => server.scripts.length,
    request: { vmName: 'unused', gpu: { model: 'H100', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Credentials', primitive: 'observe' },
      { kind: 'Transient', primitive: 'cleanup' },
    ],
  };
}
