/**
 * `--image` and `--disk-gb` reach each cloud's create request (prepare + create against the cloud's
 * fixture), and each adapter's capabilities are the cloud table's (src/core/clouds.ts). One table-driven
 * battery, like conformance.ts: every cloud says where its create request went and what it must hold.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { imageDiskOf } from '../../src/core/image-disk';
import type { CloudProvider, InstanceSpec, ResourceRequest } from '../../src/core/provider';
import type { HttpFixture, RecordedRequest } from '../fixtures/http-fixture';
import { motoMissing } from '../harness/moto';
import { startAwsDouble } from './aws/double';
import { startDigitalOceanDouble } from './digitalocean/double';
import { startDockerDouble } from './docker/double';
import { startGcpDouble } from './gcp/double';
import { startHyperstackDouble } from './hyperstack/double';
import { startLambdaDouble } from './lambda/double';
import { startMassedComputeDouble } from './massedcompute/double';
import { startNebiusDouble } from './nebius/double';
import { startPrimeIntellectDouble } from './primeintellect/double';
import { startRunPodDouble } from './runpod/double';
import { startVastaiDouble } from './vastai/double';
import { startVerdaDouble } from './verda/double';
import { specFor } from './conformance';
import { planned } from './planned';

interface Started {
  provider: CloudProvider;
  /** What the create request(s) carried, newest last. */
  sent(): unknown[];
  close(): Promise<void>;
}

interface Case {
  cloud: string;
  request: ResourceRequest;
  want: Pick<InstanceSpec, 'image' | 'diskGb'>;
  start(): Promise<Started>;
  /** What the last create request must hold. */
  expected: Record<string, unknown>;
  skip?: boolean;
}

const gpu = (model: string): ResourceRequest => ({ vmName: 'img', gpu: { model, count: 1 }, k8s: false });
const bodies = (http: HttpFixture, method: string, path: RegExp) => (): unknown[] =>
  http.requests.filter((r: RecordedRequest) => r.method === method && path.test(r.path)).map((r) => r.body);
const http = <D extends { provider: CloudProvider; server: { http: HttpFixture }; close(): Promise<void> }>(d: D, method: string, path: RegExp): Started => ({
  provider: d.provider,
  sent: bodies(d.server.http, method, path),
  close: () => d.close(),
});

const CONTAINER = 'nvidia/cuda:12.4.1-runtime-ubuntu22.04';

const CASES: Case[] = [
  {
    cloud: 'aws',
    skip: motoMissing(),
    request: gpu('T4'),
    want: { image: 'ami-0a1b2c3d4e5f60001', diskGb: 300 },
    start: async () => {
      const d = await startAwsDouble();
      return { provider: d.provider, sent: () => d.sent.filter((c) => c.command === 'RunInstances').map((c) => c.input), close: () => d.close() };
    },
    expected: {
      ImageId: 'ami-0a1b2c3d4e5f60001',
      BlockDeviceMappings: [{ DeviceName: '/dev/sda1', Ebs: { VolumeSize: 300, DeleteOnTermination: true } }],
    },
  },
  {
    cloud: 'gcp',
    request: { ...gpu('T4'), regions: ['us-central1'] },
    want: { image: 'projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts', diskGb: 500 },
    start: async () => http(await startGcpDouble(), 'POST', /\/instances$/),
    expected: {
      disks: [
        expect.objectContaining({
          initializeParams: expect.objectContaining({ sourceImage: expect.stringMatching(/ubuntu-2204-jammy-v20260110$/), diskSizeGb: '500' }),
        }),
      ],
    },
  },
  {
    cloud: 'lambda',
    request: gpu('A10'),
    want: { image: 'lambda-stack-24-04' },
    start: async () => http(await startLambdaDouble(), 'POST', /launch$/),
    expected: { image: { family: 'lambda-stack-24-04' } },
  },
  {
    cloud: 'hyperstack',
    request: gpu('H100'),
    want: { image: 'Ubuntu Server 24.04 LTS R570 CUDA 12.8' },
    start: async () => http(await startHyperstackDouble(), 'POST', /\/virtual-machines$/),
    expected: { image_name: 'Ubuntu Server 24.04 LTS R570 CUDA 12.8' },
  },
  {
    cloud: 'digitalocean',
    request: gpu('H100'),
    want: { image: '123456' },
    start: async () => http(await startDigitalOceanDouble(), 'POST', /\/droplets$/),
    expected: { image: 123456 },
  },
  {
    cloud: 'verda',
    request: gpu('H100'),
    want: { image: 'ubuntu-22.04-cuda-12.4-docker', diskGb: 250 },
    start: async () => http(await startVerdaDouble(), 'POST', /^\/v1\/instances$|^\/instances$/),
    expected: { image: 'ubuntu-22.04-cuda-12.4-docker', os_volume: { name: 'gpuprov-img-os', size: 250 } },
  },
  {
    cloud: 'massedcompute',
    request: gpu('L40'),
    want: { image: '7' },
    start: async () => http(await startMassedComputeDouble(), 'POST', /launch|instances$/),
    expected: { imageId: 7 },
  },
  {
    cloud: 'primeintellect',
    request: gpu('H100'),
    want: { image: 'ubuntu_22_cuda_12_4', diskGb: 120 },
    start: async () => http(await startPrimeIntellectDouble(), 'POST', /pods\/?$/),
    expected: { pod: expect.objectContaining({ image: 'ubuntu_22_cuda_12_4', diskSize: 120 }) },
  },
  {
    cloud: 'runpod',
    request: gpu('RTX4090'),
    want: { image: CONTAINER, diskGb: 80 },
    start: async () => http(await startRunPodDouble(), 'POST', /pods$/),
    expected: { image: CONTAINER, disk: 80 },
  },
  {
    cloud: 'vastai',
    request: { ...gpu('RTX4090'), regions: ['US'] },
    want: { image: CONTAINER, diskGb: 80 },
    start: async () => http(await startVastaiDouble(), 'PUT', /\/asks\//),
    expected: { image: CONTAINER, disk: 80 },
  },
  {
    cloud: 'docker',
    request: { vmName: 'img', k8s: false },
    want: { image: 'gpuprov/sshd:1' },
    start: async () => http(await startDockerDouble(), 'POST', /containers\/create$/),
    expected: { Image: expect.stringMatching(/^sha256:/) },
  },
];

describe('--image and --disk-gb reach every cloud that takes them', () => {
  const open: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
  });

  it.each(CASES.filter((c) => !c.skip).map((c) => [c.cloud, c] as const))('%s', async (_cloud, c) => {
    const s = await c.start();
    open.push(s);
    expect(s.provider.capabilities()).toMatchObject(imageDiskOf(c.cloud));
    const [offer] = await planned(s.provider, { ...c.request, ...c.want });
    expect(offer, `${c.cloud} planned nothing`).toBeDefined();
    const spec = specFor('img', c.want);
    await s.provider.create(offer!, await s.provider.prepare(offer!, spec), spec);
    expect(s.sent().at(-1)).toMatchObject(c.expected);
  });

  it('nebius: the boot disk is made from the image family, at the size', async () => {
    const d = await startNebiusDouble();
    open.push(d);
    expect(d.provider.capabilities()).toMatchObject(imageDiskOf('nebius'));
    const [offer] = await planned(d.provider, gpu('H100'));
    const spec = specFor('img', { image: 'ubuntu24.04-cuda12', diskGb: 400 });
    await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const disk = d.server.disks().at(-1)?.spec;
    expect(disk).toMatchObject({ source_image_family: { image_family: 'ubuntu24.04-cuda12' } });
    expect(Number(disk?.size_gibibytes)).toBe(400); // int64: a string on the wire
  });

  it.skipIf(motoMissing())('aws: an AMI the region lacks fails prepare as Unavailable for that region (AMIs are per region)', async () => {
    const d = await startAwsDouble();
    open.push(d);
    const [offer] = await planned(d.provider, gpu('T4'));
    await expect(d.provider.prepare(offer!, specFor('img', { image: 'ami-0fedcba9876543210' }))).rejects.toMatchObject({
      kind: 'Unavailable',
      block: 'region',
      message: expect.stringContaining('ami-0fedcba9876543210'),
    });
  });

  it('docker: an image the daemon lacks fails prepare with InvalidRequest naming it', async () => {
    const d = await startDockerDouble();
    open.push(d);
    const [offer] = await planned(d.provider, { vmName: 'img', k8s: false });
    await expect(d.provider.prepare(offer!, specFor('img', { image: 'someone/else:2' }))).rejects.toMatchObject({
      kind: 'InvalidRequest',
      message: expect.stringContaining('someone/else:2'),
    });
  });

  it('every cloud without the flags says so in its capabilities (local)', () => {
    expect(imageDiskOf('local')).toEqual({ image: false, diskGb: false });
    expect(imageDiskOf('no-such-cloud')).toEqual({ image: false, diskGb: false });
  });
});
