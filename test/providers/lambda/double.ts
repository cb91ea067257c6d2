/** The Lambda adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import type { ErrorKind } from '../../../src/errors';
import { LambdaProvider } from '../../../src/providers/lambda';
import { faultFor, startLambdaServer, API_KEY, type LambdaServer } from '../../fixtures/lambda/server';
import type { Primitive } from '../conformance';

export interface LambdaDouble {
  provider: LambdaProvider;
  server: LambdaServer;
  countLive(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

export async function startLambdaDouble(): Promise<LambdaDouble> {
  const server = await startLambdaServer();
  const provider = new LambdaProvider({ apiKey: API_KEY, baseUrl: server.url });
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
