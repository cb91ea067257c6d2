/** The Vast.ai adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { VastProvider } from '../../../src/providers/vastai';
import { API_KEY, faultFor, startVastServer, type VastServer } from '../../fixtures/vastai/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { wireFaultDouble, type Double } from '../double';

export type VastDouble = Double<VastProvider, VastServer>;

export async function startVastaiDouble(): Promise<VastDouble> {
  const server = await startVastServer();
  const make = (deployment: string): VastProvider => new VastProvider({ apiKey: API_KEY, baseUrl: server.url, deployment });
  return { ...wireFaultDouble(make(CONFORMANCE_DEPLOYMENT), server, faultFor), twin: make };
}
