/**
 * AWS create with `--image` and `--disk-gb`: our adapter's RunInstances (its wire form, as the AWS
 * SDK serialized it) against boto3's `run_instances` with the same ImageId and BlockDeviceMappings,
 * both at moto. The image and root-disk parameters (names with their indices, and values) must be
 * boto3's; boto3 rejects a mapping field it does not know.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { exercise, SPEC, type CloudReport } from './check';
import { startAwsDouble } from '../providers/aws/double';
import { runDriver } from './vendor';

export const AWS_IMAGE_DISK = { image: 'ami-0a1b2c3d4e5f60001', diskGb: 120 };

/** The image and disk parameters of a RunInstances form body, sorted. */
export const imageDiskParams = (params: Record<string, string>): string[] =>
  Object.entries(params)
    .filter(([k]) => k === 'ImageId' || k.startsWith('BlockDeviceMapping.'))
    .map(([k, v]) => `${k}=${v}`)
    .sort();

export async function checkAwsRunInstances(): Promise<CloudReport & { ours: string[]; vendor: string[] }> {
  const d = await startAwsDouble();
  try {
    const bodies: string[] = [];
    const record = (client: EC2Client): void => {
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const body = (args.request as { body?: unknown }).body;
          if (context.commandName === 'RunInstancesCommand' && typeof body === 'string') bodies.push(body);
          return next(args);
        },
        { step: 'build', name: 'gpuprovContractRecord' },
      );
    };
    const provider = d.makeProvider({ configureClient: record });
    await exercise(provider, { vmName: 'contract', gpu: { model: 'T4', count: 1 }, k8s: false, ...AWS_IMAGE_DISK }, { ...SPEC, ...AWS_IMAGE_DISK });
    const first = bodies[0];
    if (!first) throw new Error('aws: our adapter sent no RunInstances');
    const ours = Object.fromEntries(new URLSearchParams(first));
    const r = await runDriver('aws_run.py', { url: d.url, ours });
    const wire = r.notes.find((n) => n.startsWith('wire '));
    const vendor = wire ? imageDiskParams(JSON.parse(wire.slice(5)) as Record<string, string>) : [];
    const mine = imageDiskParams(ours);
    const failures = [
      ...r.calls.filter((c) => !c.ok).map((c) => `boto3 rejected our RunInstances parameters or moto's answer: ${c.error ?? c.skipped ?? ''}`),
      ...(JSON.stringify(mine) === JSON.stringify(vendor) ? [] : [`image/disk parameters: ours ${mine.join('&')}, boto3 ${vendor.join('&')}`]),
    ];
    return {
      cloud: 'aws (--image, --disk-gb)',
      client: r.client,
      version: r.version,
      mismatches: failures.length,
      accepted: 0,
      failures,
      notes: [],
      ours: mine,
      vendor,
    };
  } finally {
    await d.close();
  }
}
