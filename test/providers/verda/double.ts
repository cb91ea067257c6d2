/** The Verda test double: the provider wired to a fresh stateful fixture. Reused by cross-cloud tests. */
import type { ErrorKind } from '../../../src/errors';
import { VerdaProvider } from '../../../src/providers/verda';
import type { ResourceRequest } from '../../../src/providers/types';
import { startVerdaFixture, type VerdaErrorKind, type VerdaFixture } from '../../fixtures/verda/server';
import type { Primitive } from '../conformance';

const ROUTE: Record<Primitive, [string, string]> = {
  plan: ['GET', '/instance-types'],
  prepare: ['GET', '/sshkeys'],
  create: ['POST', '/instances'],
  observe: ['GET', '/instances'],
  delete: ['GET', '/instances'],
  cleanup: ['GET', '/scripts'],
};
const KIND: Partial<Record<ErrorKind, VerdaErrorKind>> = { Capacity: 'capacity', Quota: 'quota', Credentials: 'credentials', Transient: 'server-error' };

export interface VerdaDouble {
  provider: VerdaProvider;
  server: VerdaFixture;
  request: ResourceRequest;
  kinds: { kind: ErrorKind; primitive: Primitive }[];
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startVerdaDouble(): Promise<VerdaDouble> {
  const server = await startVerdaFixture();
  const provider = new VerdaProvider({ clientId: server.clientId, clientSecret: server.clientSecret, baseUrl: server.url });
  return {
    provider,
    server,
    request: { vmName: 'unused', gpu: { model: 'H100', count: 1 }, k8s: true },
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Credentials', primitive: 'observe' },
      { kind: 'Transient', primitive: 'cleanup' },
    ],
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => {
      const [method, pattern] = ROUTE[primitive];
      const k = KIND[kind];
      if (!k) throw new Error(`verda double cannot arm ${kind}`);
      server.armError(k, method, pattern);
      // A 401 makes the adapter refresh its token and repeat the call once: refuse that one too.
      if (kind === 'Credentials') server.armError(k, method, pattern);
    },
    close: () => server.close(),
  };
}
