/**
 * `provision offers --capacity-block` and `offers --reserved` as a user types them: the CLI as a
 * separate process (bin/provision.js, a temporary HOME, pointed at the run's dev server and a test
 * worker's task queue by env), the worker holding the real AWS and GCP adapters. AWS is moto plus
 * the reservation fixture (test/fixtures/aws/reserved.ts, judged by botocore's model in
 * test/contract) for the calls moto does not serve; GCP is the Compute fixture server on 127.0.0.1
 * (judged by the Discovery document); Nebius is its gRPC fixture with one capacity block group
 * (protos judged by the nebius SDK's descriptors). Each table is printed so the notes can quote it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { OFFERINGS, ReservationStore, type ReservationRow } from '../fixtures/aws/reserved';
import { motoMissing } from '../harness/moto';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { startAwsDouble, type AwsDouble } from '../providers/aws/double';
import { startGcpDouble, type GcpDouble } from '../providers/gcp/double';
import { startNebiusDouble, type NebiusDouble } from '../providers/nebius/double';
import { PROJECTS } from '../fixtures/nebius/server';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

const ODCR: ReservationRow = {
  id: 'cr-0123456789abcdef0',
  instanceType: 'g4dn.xlarge',
  zone: 'us-east-1b',
  total: 2,
  free: 1,
  state: 'active',
  start: '2026-12-01T08:00:00.000Z',
};
const BLOCK: ReservationRow = {
  id: 'cr-0b10c000000000042',
  instanceType: 'p5.48xlarge',
  zone: 'us-east-1a',
  total: 1,
  free: 1,
  state: 'scheduled',
  start: '2027-01-06T11:30:00.000Z',
  end: '2027-01-08T11:30:00.000Z',
  type: 'capacity-block',
};

interface Ran {
  code: number;
  out: string;
  err: string;
}

describe.skipIf(!requireServer() || motoMissing())('offers --capacity-block / --reserved against the AWS and GCP fixtures (CLI subprocess)', () => {
  let home: string;
  let aws: AwsDouble;
  let gcp: GcpDouble;
  let nebius: NebiusDouble;
  let worker: TestWorker;

  const provision = async (...args: string[]): Promise<Ran> => {
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      TEMPORAL_ADDRESS: testEnv().address,
      TEMPORAL_NAMESPACE: testEnv().namespace,
      GPUPROV_TASK_QUEUE: worker.taskQueue,
    };
    try {
      const r = await run(process.execPath, [join(ROOT, 'bin', 'provision.js'), ...args], { env, cwd: ROOT, timeout: 240_000 });
      return { code: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? '' };
    }
  };
  const show = (what: string, r: Ran): void => {
    process.stdout.write(`\n$ provision ${what}   (exit ${r.code})\n${r.out}${r.err ? `[stderr]\n${r.err}` : ''}`);
  };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'gpuprov-e2e-reserved-'));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    aws = await startAwsDouble();
    const store = new ReservationStore([ODCR, BLOCK], OFFERINGS);
    aws.serve((command, input) => store.serve(command, input));
    gcp = await startGcpDouble({ regions: ['us-central1'] });
    gcp.server.addReservation({
      name: 'r-t4',
      zone: 'us-central1-a',
      machineType: 'n1-standard-4',
      accelerators: [{ acceleratorType: 'nvidia-tesla-t4', acceleratorCount: 1 }],
      count: 2,
      inUseElsewhere: 1,
    });
    nebius = await startNebiusDouble();
    nebius.server.groups.push({
      id: 'capacityblockgroup-e00h100',
      parentId: PROJECTS['eu-north1'],
      region: 'eu-north1',
      platform: 'gpu-h100-sxm',
      limit: 4,
      usage: 1,
      start: '2026-12-01T00:00:00Z',
      end: '2027-03-01T00:00:00Z',
    });
    const ssh = await loadOrCreateSshIdentity(join(home, 'keys'));
    worker = await startTestWorker({
      activities: createActivities({ registry: new ProviderRegistry([aws.provider, gcp.provider, nebius.provider]), ssh, owner: 'default' }),
    });
  }, 180_000);
  afterAll(async () => {
    await worker?.stop();
    await aws?.close();
    await gcp?.close();
    await nebius?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('--capacity-block --duration 24h --gpu H100:8: the blocks on sale, window and UPFRONT price; GCP and Nebius named as selling none', async () => {
    const r = await provision('offers', '--capacity-block', '--duration', '24h', '--gpu', 'H100:8');
    show('offers --capacity-block --duration 24h --gpu H100:8', r);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^OFFERING\s+CLOUD\s+REGION\s+ZONE\s+TYPE\s+COUNT\s+START\s+END\s+HOURS\s+UPFRONT$/);
    // Cheapest first.
    expect(lines[1]).toMatch(
      /^cb-0a1b2c3d4e5f60718\s+aws\s+us-east-1\s+us-east-1a\s+p5\.48xlarge\s+1\s+2026-12-09T11:30:00\.000Z\s+2026-12-10T11:30:00\.000Z\s+24\s+\$757\.92$/,
    );
    expect(lines[2]).toMatch(
      /^cb-0f1e2d3c4b5a69788\s+aws\s+us-east-1\s+us-east-1b\s+p5\.48xlarge\s+1\s+2026-12-08T11:30:00\.000Z\s+2026-12-09T11:30:00\.000Z\s+24\s+\$801\.12$/,
    );
    expect(r.out).toContain('2 capacity block offering(s); UPFRONT is billed at once when bought.');
    expect(r.out).toContain('next: npx provision start --name gpu1 --capacity-block cb-0a1b2c3d4e5f60718 --duration 24h --yes');
    expect(r.err).toContain('gcp: skipped (InvalidRequest): gcp sells no capacity blocks');
    expect(r.err).toContain('nebius: skipped (InvalidRequest): nebius sells no capacity blocks');
    const ask = aws.sent.filter((s) => s.command === 'DescribeCapacityBlockOfferings').at(-1)!.input;
    expect(ask).toMatchObject({ InstanceType: 'p5.48xlarge', InstanceCount: 1, CapacityDurationHours: 24 });
  });

  it('--reserved: every usable reservation with FREE of total, its WINDOW and no extra charge beside the on-demand price', async () => {
    const r = await provision('offers', '--reserved');
    show('offers --reserved', r);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^CLOUD\s+REGION\s+ZONE\s+TYPE\s+GPU\s+RESERVATION\s+KIND\s+FREE\s+WINDOW\s+PRICE\s+ON-DEMAND$/);
    const row = (id: string): string => lines.find((l) => l.includes(id)) ?? `(no row for ${id})`;
    expect(row(BLOCK.id)).toMatch(
      /^aws\s+us-east-1\s+us-east-1a\s+p5\.48xlarge\s+H100:8\s+cr-0b10c000000000042\s+capacity-block\s+1\/1\s+2027-01-06T11:30:00\.000Z → 2027-01-08T11:30:00\.000Z\s+no extra charge: paid upfront with the capacity block\s/,
    );
    expect(row(ODCR.id)).toMatch(
      /^aws\s+us-east-1\s+us-east-1b\s+g4dn\.xlarge\s+T4:1\s+cr-0123456789abcdef0\s+capacity-reservation\s+1\/2\s+open\s+no extra charge: billed with the reservation \(the on-demand rate, used or not\)\s+\$0\.526\/h$/,
    );
    expect(row('r-t4')).toMatch(
      /^gcp\s+us-central1\s+us-central1-a\s+n1-standard-4\s+T4:1\s+r-t4\s+specific-reservation\s+1\/2\s+open\s+no extra charge: billed with the reservation \(its machines are paid whether used or not\)\s+\$0\.540\/h$/,
    );
    expect(row('capacityblockgroup-e00h100')).toMatch(
      /^nebius\s+eu-north1\s+-\s+gpu-h100-sxm:1gpu-16vcpu-200gb\s+H100:1\s+capacityblockgroup-e00h100\s+capacity-block\s+3\/4\s+2026-12-01T00:00:00\.000Z → 2027-03-01T00:00:00\.000Z\s+no extra charge: billed with the capacity block group\s+\$2\.95\/h$/,
    );
    expect(r.out).toContain('5 reservation(s).');
    expect(r.out).toMatch(/next: npx provision start --name gpu1 --reservation \S+/);
  });

  it('--reserved --gpu H100:8: the AWS block and the Nebius group of 8-GPU presets; GCP has no H100', async () => {
    const r = await provision('offers', '--reserved', '--gpu', 'H100:8');
    show('offers --reserved --gpu H100:8', r);
    expect(r.code, r.err).toBe(0);
    const rows = r.out.split('\n').filter((l) => /^(aws|gcp|nebius)\s/.test(l));
    expect(rows.map((l) => l.split(/\s+/).slice(0, 4).join(' '))).toEqual([
      'aws us-east-1 us-east-1a p5.48xlarge',
      'nebius eu-north1 - gpu-h100-sxm:8gpu-128vcpu-1600gb',
    ]);
    expect(r.err).toContain('gcp: skipped');
  });

  it.each([
    [['--capacity-block', '--gpu', 'H100:8'], '--duration', 'add --duration 24h'],
    [['--capacity-block', '--duration', '90m'], '--duration', 'e.g. --duration 24h'],
    [['--capacity-block', '--duration', 'soon'], '--duration', ''],
    [['--capacity-block', '--duration', '24h', '--count', '0'], '--count', 'e.g. --count 2'],
    [['--reserved', '--duration', '24h'], '--duration', 'add --capacity-block'],
  ])('offers %j: exit 2 naming %s and the fix, nothing asked of a cloud', async (args, flag, fix) => {
    const asked = aws.sent.length;
    const r = await provision('offers', ...args);
    expect(r.code, `${r.out}\n${r.err}`).toBe(2);
    expect(r.err).toContain(flag);
    if (fix) expect(r.err).toContain(fix);
    expect(aws.sent.length).toBe(asked);
  });
});
