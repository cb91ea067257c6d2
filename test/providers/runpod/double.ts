/** The RunPod adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { RunPodProvider } from '../../../src/providers/runpod';
import { API_KEY, faultFor, startRunPodServer, type RunPodServer } from '../../fixtures/runpod/server';
import { wireFaultDouble, type Double } from '../double';

export type RunPodDouble = Double<RunPodProvider, RunPodServer>;

export async function startRunPodDouble(): Promise<RunPodDouble> {
  const server = await startRunPodServer();
  return wireFaultDouble(new RunPodProvider({ apiKey: API_KEY, baseUrl: server.url }), server, faultFor);
}
