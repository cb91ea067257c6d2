/** The Vast.ai adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import type { ErrorKind } from '../../../src/errors';
import { VastProvider } from '../../../src/providers/vastai';
import { API_KEY, faultFor, startVastServer, type VastServer } from '../../fixtures/vastai/server';
import type { Primitive } from '../conformance';

export interface VastDouble {
  provider: VastProvider;
  server: VastServer;
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startVastaiDouble(): Promise<VastDouble> {
  const server = await startVastServer();
  const provider = new VastProvider({ apiKey: API_KEY, baseUrl: server.url });
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
