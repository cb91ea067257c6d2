/**
 * RunPod with `--image` and `--disk-gb`: the SDK speaks GraphQL only, so our REST v2 create body
 * (from one life at the fixture) is handed to the SDK's deploy-mutation builder (runpod.py), which
 * must take our image and disk as its `imageName` and `containerDiskInGb`.
 */
import { exercise, SPEC, type CloudReport } from './check';
import { startRunPodDouble } from '../providers/runpod/double';
import { runDriver } from './vendor';

export const RUNPOD_IMAGE_DISK = { image: 'pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime', diskGb: 80 };

export async function checkRunPodCreate(): Promise<CloudReport> {
  const d = await startRunPodDouble();
  let body: unknown;
  try {
    await exercise(d.provider, { vmName: 'contract', gpu: { model: 'H100', count: 1 }, k8s: true, ...RUNPOD_IMAGE_DISK }, { ...SPEC, ...RUNPOD_IMAGE_DISK });
    body = d.server.http.requests.find((q) => q.method === 'POST' && /\/pods\/?$/.test(q.path))?.body;
  } finally {
    await d.close();
  }
  if (!body) throw new Error('runpod: our adapter created no pod');
  const r = await runDriver('runpod.py', { url: '', ours: body });
  const failures = r.calls.filter((c) => !c.ok).map((c) => `the runpod SDK cannot express our create: ${c.error ?? c.skipped ?? ''}`);
  return {
    cloud: 'runpod (--image, --disk-gb; GraphQL mutation)',
    client: r.client,
    version: r.version,
    mismatches: failures.length,
    accepted: 0,
    failures,
    notes: r.notes,
  };
}
