/** The DigitalOcean test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import { DigitalOceanProvider } from '../../../src/providers/digitalocean';
import { startDoFixture, type DoFixture } from '../../fixtures/digitalocean/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { routeArmer, wireDouble, type PlannedDouble } from '../double';

export type DigitalOceanDouble = PlannedDouble<DigitalOceanProvider, DoFixture>;

export async function startDigitalOceanDouble(opts: { perPage?: number } = {}): Promise<DigitalOceanDouble> {
  const server = await startDoFixture();
  const make = (deployment: string): DigitalOceanProvider =>
    new DigitalOceanProvider({ token: server.token, baseUrl: server.url, deployment, ...(opts.perPage ? { perPage: opts.perPage } : {}) });
  const provider = make(CONFORMANCE_DEPLOYMENT);
  const arm = routeArmer(
    'digitalocean',
    {
      plan: ['GET', '/v2/sizes'],
      prepare: ['GET', '/v2/account/keys'],
      create: ['POST', '/v2/droplets'],
      observe: ['GET', '/v2/droplets'],
      delete: ['GET', '/v2/droplets'],
      cleanup: undefined,
    },
    { Capacity: 'capacity', Quota: 'quota', Unavailable: 'unavailable', Credentials: 'credentials', Transient: 'rate-limit' },
    server,
  );
  return {
    ...wireDouble(provider, server, arm),
    twin: make,
    countSide: async () => server.firewalls.size,
    request: { vmName: 'unused', gpu: { model: 'H100', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Unavailable', primitive: 'create' },
      { kind: 'Credentials', primitive: 'prepare' },
      { kind: 'Transient', primitive: 'observe' },
    ],
  };
}
