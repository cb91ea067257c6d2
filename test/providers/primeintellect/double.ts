/** The Prime Intellect adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import type { ErrorKind } from '../../../src/errors';
import { PrimeIntellectProvider } from '../../../src/providers/primeintellect';
import { API_KEY, faultFor, startPrimeServer, type PrimeServer } from '../../fixtures/primeintellect/server';
import type { Primitive } from '../conformance';

export interface PrimeIntellectDouble {
  provider: PrimeIntellectProvider;
  server: PrimeServer;
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startPrimeIntellectDouble(): Promise<PrimeIntellectDouble> {
  const server = await startPrimeServer();
  const provider = new PrimeIntellectProvider({ apiKey: API_KEY, baseUrl: server.url });
  return {
    provider,
    server,
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => {
      const { route, fault } = faultFor(kind, primitive);
      server.arm(route, fault);
    },
    close: () => server.close(),
  };
}
