/** The Vast.ai adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { VastProvider } from '../../../src/providers/vastai';
import { API_KEY, faultFor, startVastServer, type VastServer } from '../../fixtures/vastai/server';
import { wireFaultDouble, type Double } from '../double';

export type VastDouble = Double<VastProvider, VastServer>;

export async function startVastaiDouble(): Promise<VastDouble> {
  const server = await startVastServer();
  return wireFaultDouble(new VastProvider({ apiKey: API_KEY, baseUrl: server.url }), server, faultFor);
}
