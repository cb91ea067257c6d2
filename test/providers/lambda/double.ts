/** The Lambda adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { LambdaProvider } from '../../../src/providers/lambda';
import { faultFor, startLambdaServer, API_KEY, type LambdaServer } from '../../fixtures/lambda/server';
import { wireFaultDouble, type Double } from '../double';

export type LambdaDouble = Double<LambdaProvider, LambdaServer>;

export async function startLambdaDouble(): Promise<LambdaDouble> {
  const server = await startLambdaServer();
  return wireFaultDouble(new LambdaProvider({ apiKey: API_KEY, baseUrl: server.url }), server, faultFor);
}
