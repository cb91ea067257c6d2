/** The Prime Intellect adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { PrimeIntellectProvider } from '../../../src/providers/primeintellect';
import { API_KEY, faultFor, startPrimeServer, type PrimeServer } from '../../fixtures/primeintellect/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { wireFaultDouble, type Double } from '../double';

export type PrimeIntellectDouble = Double<PrimeIntellectProvider, PrimeServer>;

export async function startPrimeIntellectDouble(): Promise<PrimeIntellectDouble> {
  const server = await startPrimeServer();
  const make = (deployment: string): PrimeIntellectProvider => new PrimeIntellectProvider({ apiKey: API_KEY, baseUrl: server.url, deployment });
  return { ...wireFaultDouble(make(CONFORMANCE_DEPLOYMENT), server, faultFor), twin: make };
}
