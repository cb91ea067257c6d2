/** The Lambda adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { LambdaProvider } from '../../../src/providers/lambda';
import { faultFor, startLambdaServer, API_KEY, type LambdaServer } from '../../fixtures/lambda/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { wireFaultDouble, type Double } from '../double';

export type LambdaDouble = Double<LambdaProvider, LambdaServer>;

export async function startLambdaDouble(): Promise<LambdaDouble> {
  const server = await startLambdaServer();
  const make = (deployment: string): LambdaProvider => new LambdaProvider({ apiKey: API_KEY, baseUrl: server.url, deployment });
  return { ...wireFaultDouble(make(CONFORMANCE_DEPLOYMENT), server, faultFor), twin: make };
}
