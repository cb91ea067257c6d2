/**
 * The EC2 requests of one adapter life at moto (plan, prepare, create with `--image`/`--disk-gb`,
 * observe, delete, cleanup), as the AWS SDK serialized them, for the spec judge. moto's answers
 * are moto's, not a fixture of ours, so only the requests are judged.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { AWS_IMAGE_DISK } from './aws-run';
import { exercise, SPEC } from './check';
import type { Exchange } from './spec-check';
import { startAwsDouble } from '../providers/aws/double';

export async function recordEc2Life(): Promise<Exchange[]> {
  const d = await startAwsDouble();
  try {
    const out: Exchange[] = [];
    const record = (client: EC2Client): void => {
      client.middlewareStack.add(
        (next) => async (args) => {
          const body = (args.request as { body?: unknown }).body;
          if (typeof body === 'string') out.push({ method: 'POST', path: '/', query: [], headers: {}, body });
          return next(args);
        },
        { step: 'build', name: 'gpuprovSpecRecord' },
      );
    };
    const provider = d.makeProvider({ configureClient: record });
    await exercise(provider, { vmName: 'contract', gpu: { model: 'T4', count: 1 }, k8s: false, ...AWS_IMAGE_DISK }, { ...SPEC, ...AWS_IMAGE_DISK });
    return out;
  } finally {
    await d.close();
  }
}
