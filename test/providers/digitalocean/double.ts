/** The DigitalOcean test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import type { ErrorKind } from '../../../src/errors';
import { DigitalOceanProvider } from '../../../src/providers/digitalocean';
import type { ResourceRequest } from '../../../src/providers/types';
import { startDoFixture, type DoErrorKind, type DoFixture } from '../../fixtures/digitalocean/server';
import type { Primitive } from '../conformance';

const ROUTE: Record<Primitive, [string, string] | undefined> = {
  plan: ['GET', '/v2/sizes'],
  prepare: ['GET', '/v2/account/keys'],
  create: ['POST', '/v2/droplets'],
  observe: ['GET', '/v2/droplets'],
  delete: ['GET', '/v2/droplets'],
  cleanup: undefined,
};
const KIND: Partial<Record<ErrorKind, DoErrorKind>> = { Capacity: 'capacity', Quota: 'quota', Unavailable: 'unavailable', Credentials: 'credentials', Transient: 'rate-limit' };

export interface DigitalOceanDouble {
  provider: DigitalOceanProvider;
  server: DoFixture;
  request: ResourceRequest;
  kinds: { kind: ErrorKind; primitive: Primitive }[];
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startDigitalOceanDouble(opts: { perPage?: number } = {}): Promise<DigitalOceanDouble> {
  const server = await startDoFixture();
  const provider = new DigitalOceanProvider({ token: server.token, baseUrl: server.url, ...(opts.perPage ? { perPage: opts.perPage } : {}) });
  return {
    provider,
    server,
    request: { vmName: 'unused', gpu: { model: 'H100', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Unavailable', primitive: 'create' },
      { kind: 'Credentials', primitive: 'prepare' },
      { kind: 'Transient', primitive: 'observe' },
    ],
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => {
      const route = ROUTE[primitive];
      const k = KIND[kind];
      if (!route || !k) throw new Error(`digitalocean double cannot arm ${kind} at ${primitive}`);
      server.armError(k, route[0], route[1]);
    },
    close: () => server.close(),
  };
}
