/** The RunPod adapter wired to its stateful fixture; reusable by cross-cloud workflow tests. */
import { RunPodProvider } from '../../../src/providers/runpod';
import { API_KEY, faultFor, startRunPodServer, type RunPodServer } from '../../fixtures/runpod/server';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';
import { wireFaultDouble, type Double } from '../double';

export type RunPodDouble = Double<RunPodProvider, RunPodServer>;

export async function startRunPodDouble(): Promise<RunPodDouble> {
  const server = await startRunPodServer();
  const make = (deployment: string): RunPodProvider => new RunPodProvider({ apiKey: API_KEY, baseUrl: server.url, deployment });
  return { ...wireFaultDouble(make(CONFORMANCE_DEPLOYMENT), server, faultFor), twin: make };
}
