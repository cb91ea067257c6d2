/** The Massed Compute test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import type { ErrorKind } from '../../../src/errors';
import { MassedComputeProvider } from '../../../src/providers/massedcompute';
import type { ResourceRequest } from '../../../src/providers/types';
import { startMassedFixture, type MassedErrorKind, type MassedFixture } from '../../fixtures/massedcompute/server';
import type { Primitive } from '../conformance';

const ROUTE: Record<Primitive, [string, string] | undefined> = {
  plan: ['GET', '/gpu-inventory'],
  prepare: ['GET', '/images'],
  create: ['POST', '/instance/launch'],
  observe: ['GET', '/instance'],
  delete: ['GET', '/instance'],
  cleanup: undefined,
};
const KIND: Partial<Record<ErrorKind, MassedErrorKind>> = { Capacity: 'capacity', Quota: 'quota', Credentials: 'credentials', Transient: 'rate-limit' };

export interface MassedComputeDouble {
  provider: MassedComputeProvider;
  server: MassedFixture;
  request: ResourceRequest;
  kinds: { kind: ErrorKind; primitive: Primitive }[];
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startMassedComputeDouble(): Promise<MassedComputeDouble> {
  const server = await startMassedFixture();
  const provider = new MassedComputeProvider({ token: server.token, baseUrl: server.url });
  return {
    provider,
    server,
    request: { vmName: 'unused', gpu: { model: 'L40', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Credentials', primitive: 'prepare' },
      { kind: 'Transient', primitive: 'delete' },
    ],
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => {
      const route = ROUTE[primitive];
      const k = KIND[kind];
      if (!route || !k) throw new Error(`massedcompute double cannot arm ${kind} at ${primitive}`);
      server.armError(k, route[0], route[1]);
    },
    close: () => server.close(),
  };
}
