/** The Hyperstack test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import type { ErrorKind } from '../../../src/errors';
import { HyperstackProvider } from '../../../src/providers/hyperstack';
import type { ResourceRequest } from '../../../src/providers/types';
import { startHyperstackFixture, type HsErrorKind, type HyperstackFixture } from '../../fixtures/hyperstack/server';
import type { Primitive } from '../conformance';

const ROUTE: Record<Primitive, [string, string] | undefined> = {
  plan: ['GET', '/core/flavors'],
  prepare: ['GET', '/core/environments'],
  create: ['POST', '/core/virtual-machines'],
  observe: ['GET', '/core/virtual-machines'],
  delete: ['GET', '/core/virtual-machines'],
  cleanup: undefined,
};
const KIND: Partial<Record<ErrorKind, HsErrorKind>> = { Capacity: 'capacity', Quota: 'quota', Credentials: 'credentials', Transient: 'rate-limit' };

export interface HyperstackDouble {
  provider: HyperstackProvider;
  server: HyperstackFixture;
  request: ResourceRequest;
  kinds: { kind: ErrorKind; primitive: Primitive }[];
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startHyperstackDouble(opts: { pageSize?: number } = {}): Promise<HyperstackDouble> {
  const server = await startHyperstackFixture();
  const provider = new HyperstackProvider({ apiKey: server.apiKey, baseUrl: server.url, ...(opts.pageSize ? { pageSize: opts.pageSize } : {}) });
  return {
    provider,
    server,
    request: { vmName: 'unused', gpu: { model: 'H100', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Credentials', primitive: 'plan' },
      { kind: 'Transient', primitive: 'observe' },
    ],
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => {
      const route = ROUTE[primitive];
      const k = KIND[kind];
      if (!route || !k) throw new Error(`hyperstack double cannot arm ${kind} at ${primitive}`);
      server.armError(k, route[0], route[1]);
    },
    close: () => server.close(),
  };
}
