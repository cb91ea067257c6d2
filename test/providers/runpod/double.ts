/** The RunPod adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import type { ErrorKind } from '../../../src/errors';
import { RunPodProvider } from '../../../src/providers/runpod';
import { API_KEY, faultFor, startRunPodServer, type RunPodServer } from '../../fixtures/runpod/server';
import type { Primitive } from '../conformance';

export interface RunPodDouble {
  provider: RunPodProvider;
  server: RunPodServer;
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startRunPodDouble(): Promise<RunPodDouble> {
  const server = await startRunPodServer();
  const provider = new RunPodProvider({ apiKey: API_KEY, baseUrl: server.url });
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
