import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import type { VmStatus } from '../../src/core/api';
import type { Offer } from '../../src/core/provider';
import type { vmWorkflow } from '../../src/workflows';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, startLab, status, waitStage, type Lab } from './helpers';

const offer = (region: string, pricePerHour: number): Offer => ({
  cloud: 'fake',
  region,
  instanceType: 'gpu-1',
  gpu: { model: 'H100', count: 1 },
  pricePerHour,
  currency: 'USD',
});
const FOUR_REGIONS = [offer('fake-a', 1), offer('fake-b', 2), offer('fake-c', 3), offer('fake-d', 4)];

/** Wait for `ready` while sampling the fake cloud: the most instances of the VM that lived at once. */
async function readyWithPeak(lab: Lab, h: WorkflowHandle, vm: string): Promise<{ s: VmStatus; peak: number }> {
  let peak = 0;
  for (let i = 0; i < 3_000; i++) {
    peak = Math.max(peak, lab.fake.liveCount(vm));
    const s = await status(h).catch(() => undefined);
    if (s?.stage === 'ready') return { s, peak: Math.max(peak, lab.fake.liveCount(vm)) };
    if (s?.stage === 'failed') throw new Error(`launch failed: ${s.error?.message ?? ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('not ready after 3000 samples');
}

describe.skipIf(!requireServer())('hedged launch --parallel N (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab();
    lab.fake.setOffers(FOUR_REGIONS);
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('--parallel 3: the first two offers are slow and answer Capacity, the third wins; the attempts overlap', async () => {
    lab.fake.setOffers(FOUR_REGIONS.slice(0, 3));
    lab.fake.setDelay('create', 1_500);
    lab.fake.script({ primitive: 'create', region: 'fake-a', error: 'Capacity' }, { primitive: 'create', region: 'fake-b', error: 'Capacity' });
    const h = await lab.start({ name: 'par3', k8s: 'off', parallel: 3 });
    const { s, peak } = await readyWithPeak(lab, h, 'par3');
    lab.fake.setDelay('create', 0);
    lab.fake.clearRules();
    lab.fake.setOffers(FOUR_REGIONS);
    expect(s.attempts.map((a) => [a.index, a.offer.region, a.outcome, a.kind])).toEqual([
      [0, 'fake-a', 'failed', 'Capacity'],
      [1, 'fake-b', 'failed', 'Capacity'],
      [2, 'fake-c', 'ready', undefined],
    ]);
    // All three were in flight together: the third started before the first ended.
    expect(Date.parse(s.attempts[2]!.startedAt)).toBeLessThan(Date.parse(s.attempts[0]!.endedAt));
    expect(s.attempts.slice(0, 2).every((a) => a.compensated)).toBe(true);
    expect(s.location?.region).toBe('fake-c');
    expect(peak).toBeLessThanOrEqual(3);
    expect(lab.fake.live('par3').map((i) => i.region)).toEqual(['fake-c']);
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('par3')).toBe(0);
    expect(lab.fake.sideResources().filter((r) => r.startsWith('par3@'))).toEqual([]);
  });

  it('--parallel 2, both offers come up: one wins, the loser is deleted before ready; never more than 2 live', async () => {
    lab.fake.setBootMs(300);
    const h = await lab.start({ name: 'par2', k8s: 'off', parallel: 2 });
    const { s, peak } = await readyWithPeak(lab, h, 'par2');
    lab.fake.setBootMs(0);
    const creates = lab.fake.callsOf('create').filter((c) => c.vmName === 'par2');
    expect(creates.map((c) => c.region).sort()).toEqual(['fake-a', 'fake-b']);
    const won = s.attempts.find((a) => a.outcome === 'ready')!;
    const lost = s.attempts.filter((a) => a !== won);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ outcome: 'cancelled', kind: 'Cancelled', compensated: true });
    expect(lost[0]!.instanceIds).toHaveLength(1);
    expect(peak).toBeLessThanOrEqual(2);
    expect(lab.fake.live('par2').map((i) => i.id)).toEqual(won.instanceIds);
    expect(s.instanceIds).toEqual(won.instanceIds);
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('par2')).toBe(0);
  });

  it('--parallel 4 with every offer failing: exhausted after each offer once, nothing left', async () => {
    lab.fake.script({ primitive: 'create', error: 'Capacity', times: 4, ambiguous: true });
    const h = await lab.start({ name: 'par4', k8s: 'off', parallel: 4 });
    const err = await h.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    lab.fake.clearRules();
    expect(err).toBeDefined();
    const s = await status(h);
    expect(s.stage).toBe('failed');
    expect(s.attempts.map((a) => a.offer.region)).toEqual(['fake-a', 'fake-b', 'fake-c', 'fake-d']);
    expect(s.attempts.every((a) => a.kind === 'Capacity' && a.compensated)).toBe(true);
    expect(lab.fake.liveCount('par4')).toBe(0);
  });

  it('--parallel 2 --retry-until-up: a round where every offer answers Capacity, then a fresh round that wins', async () => {
    lab.fake.script({ primitive: 'create', error: 'Capacity', times: 4 });
    const h = await lab.start({ name: 'parr', k8s: 'off', parallel: 2, retryUntilUp: true });
    const { s, peak } = await readyWithPeak(lab, h, 'parr');
    lab.fake.clearRules();
    expect(s.attempts.slice(0, 4).map((a) => a.kind)).toEqual(['Capacity', 'Capacity', 'Capacity', 'Capacity']);
    expect(s.attempts.map((a) => a.index)).toEqual(s.attempts.map((_, i) => i));
    expect(s.attempts.filter((a) => a.outcome === 'ready')).toHaveLength(1);
    expect(peak).toBeLessThanOrEqual(2);
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('parr')).toBe(0);
  });

  it('a cancel while attempts are in flight compensates every one of them', async () => {
    lab.fake.setBootMs(60_000);
    const h = await lab.start({ name: 'parc', k8s: 'off', parallel: 3 });
    await waitStage(h, 'booting');
    for (let i = 0; i < 500 && lab.fake.liveCount('parc') < 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect(lab.fake.liveCount('parc')).toBe(3);
    await h.signal('cancel');
    await h.result().catch(() => undefined);
    lab.fake.setBootMs(0);
    const s = await status(h);
    expect(s.attempts.map((a) => a.outcome)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(lab.fake.liveCount('parc')).toBe(0);
  });

  it('a cancel during the compensation of a fatal attempt ends cancelled, as a serial launch does (chaos seed 17)', async () => {
    lab.fake.setBootMs(60_000);
    lab.fake.setDelay('delete', 1_500);
    lab.fake.script({ primitive: 'create', region: 'fake-a', error: 'Credentials' });
    const h = await lab.start({ name: 'parf', k8s: 'off', parallel: 2 });
    // The fatal answer is recorded before its compensation (1.5 s delete) ends: cancel in between.
    for (let i = 0; i < 500 && !(await status(h)).attempts.some((a) => a.kind === 'Credentials'); i++) await new Promise((r) => setTimeout(r, 20));
    await h.signal('cancel');
    await h.result().catch(() => undefined);
    lab.fake.setBootMs(0);
    lab.fake.setDelay('delete', 0);
    lab.fake.clearRules();
    const d = await h.describe();
    expect(d.status.name).toBe('COMPLETED');
    expect((await status(h)).stage).toBe('cancelled');
    expect(lab.fake.liveCount('parf')).toBe(0);
  });
});

const haveSshd = existsSync('/usr/sbin/sshd');

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('hedged launch on the local cloud', () => {
  let root: string;
  let worker: TestWorker;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-hedge-'));
    const faultsFile = join(root, 'faults.json');
    // local-a is slow: its instances stay Pending for a long time; local-b answers at once.
    writeFileSync(faultsFile, JSON.stringify({ rules: [{ region: 'local-a', bootDelayMs: 600_000 }] }));
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const activities = createActivities({ registry: new ProviderRegistry([new LocalProvider({ root, faultsFile })]), ssh, owner: 'default' });
    worker = await startTestWorker({ activities });
  });
  afterAll(async () => {
    await worker?.stop();
    for (const region of ['local-a', 'local-b']) await new LocalProvider({ root }).delete({ cloud: 'local', region }, 'lpar', []).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('--parallel 2 with local-a slow: local-b wins, the slow attempt is cancelled and deleted', async () => {
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: `vm-lpar-${Date.now()}`,
      args: [{ spec: { name: 'lpar', k8s: 'off', instanceTypes: ['cpu-small'], parallel: 2 }, tuning: FAST }],
    });
    const s = await waitStage(h, 'ready', 120_000);
    expect(s.location?.region).toBe('local-b');
    expect(s.attempts.map((a) => [a.offer.region, a.outcome])).toEqual([
      ['local-a', 'cancelled'],
      ['local-b', 'ready'],
    ]);
    expect(s.attempts[0]!.compensated).toBe(true);
    expect(countLive(root)).toBe(1);
    await h.signal('teardown');
    await h.result();
    expect(countLive(root)).toBe(0);
  });
});
