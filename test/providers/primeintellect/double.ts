/** The Prime Intellect adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { PrimeIntellectProvider } from '../../../src/providers/primeintellect';
import { API_KEY, faultFor, startPrimeServer, type PrimeServer } from '../../fixtures/primeintellect/server';
import { wireFaultDouble, type Double } from '../double';

export type PrimeIntellectDouble = Double<PrimeIntellectProvider, PrimeServer>;

export async function startPrimeIntellectDouble(): Promise<PrimeIntellectDouble> {
  const server = await startPrimeServer();
  return wireFaultDouble(new PrimeIntellectProvider({ apiKey: API_KEY, baseUrl: server.url }), server, faultFor);
}
