/**
 * Spot preemption on the fake cloud, told by the real account watcher: a notice makes a Ready
 * `--recover` VM start its replacement at once under the same name while the old instance runs;
 * the old one is deleted when the replacement is Ready, or at the deadline when that comes first;
 * never more than two billed instances of the name at any observation. Without a notice: the
 * ordinary recovery. `spot: 'auto'` preempted too often: the replacement is on-demand. `explain`
 * and `status` show the cause with notice and deadline.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { teardownSignal, type VmSpec, type VmStatus } from '../../src/core/api';
import { explainWorkflow } from '../../src/client/commands/explain';
import { formatExplain } from '../../src/client/explain-report';
import { connectTarget } from '../../src/client/ssh-proxy';
import type { Tuning } from '../../src/core/tuning';
import type { vmWorkflow } from '../../src/workflows';
import { FakeProvider, defaultFakeOffers } from '../harness/fake-provider';
import { requireServer, testEnv } from '../harness/temporal';
import { waitFor } from './helpers';
import { QUIET, sampleBilled, startWatchedFake, type WatchedFake } from './watched-fake';

const LOOK_MS = 300;
const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');

describe.skipIf(!requireServer())('spot preemption under --recover (FakeProvider, account watcher)', () => {
  const fake = new FakeProvider();
  let lab: WatchedFake;
  beforeAll(async () => {
    lab = await startWatchedFake(fake, 'test-preempt', { fastIntervalMs: LOOK_MS, readyIntervalMs: LOOK_MS, slowIntervalMs: 2_000, heartbeatTimeoutMs: 6_000 });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  async function start(spec: Partial<VmSpec>, tuning: Partial<Tuning> = {}): Promise<{ h: WorkflowHandle<typeof vmWorkflow>; name: string }> {
    const name = `pre-${randomUUID().slice(0, 6)}`;
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: lab.worker.taskQueue,
      workflowId: `vm-${name}`,
      args: [{ spec: { k8s: 'off', recover: true, ...spec, name }, tuning: { ...QUIET, ...tuning } }],
    });
    return { h, name };
  }

  const readyAgain = (s: VmStatus): boolean => s.stage === 'ready' && s.recovered?.count === 1;

  async function down(h: WorkflowHandle<typeof vmWorkflow>, name: string): Promise<void> {
    await h.signal(teardownSignal);
    expect((await h.result()).stage).toBe('terminated');
    expect(fake.liveCount(name)).toBe(0);
  }

  it('a notice: the replacement starts before the deadline, the old instance goes when it is Ready, never more than two billed', async () => {
    fake.setBootMs(0);
    const { h, name } = await start({});
    const first = await waitFor(h, (s) => s.stage === 'ready', 'ready', 30_000);
    const oldId = first.instanceIds[0]!;
    fake.setBootMs(1_500);
    const billed = sampleBilled(fake, name);
    const notice = fake.preempt(oldId, { noticeMs: 25_000 })!;
    // While the replacement launches, `ssh NAME` still reaches the preempted instance.
    const launching = await waitFor(h, (s) => s.retiring !== undefined && s.stage !== 'ready', 'replacement launching', 20_000);
    expect(connectTarget(launching)?.endpoint).toEqual(first.endpoint);
    const again = await waitFor(h, (s) => readyAgain(s) && s.retiring?.goneAt !== undefined, 'replacement ready, old one deleted', 30_000);
    const max = billed.stop();
    expect(max).toBeLessThanOrEqual(2);
    expect(max).toBe(2); // the overlap happened: the replacement booted beside the old instance
    expect(again.instanceIds[0]).not.toBe(oldId);
    expect(fake.live(name).map((i) => i.id)).toEqual(again.instanceIds);
    const created = fake.callsOf('create').filter((c) => c.vmName === name);
    expect(created).toHaveLength(2);
    expect(created[1]!.at).toBeLessThan(Date.parse(notice.deadline!));
    expect(Date.parse(again.retiring!.goneAt!)).toBeLessThan(Date.parse(notice.deadline!));
    expect(Date.parse(again.retiring!.goneAt!)).toBeGreaterThanOrEqual(Date.parse(again.readyAt!));
    expect(connectTarget(again)?.endpoint).toEqual(again.endpoint);
    expect(again.recovered).toMatchObject({ count: 1, lastCause: { kind: 'preempted', noticeAt: notice.noticeAt, deadline: notice.deadline } });
    expect(again.recovered?.lastReason).toMatch(/^preempted \(notice \d\d:\d\d:\d\d, deadline \d\d:\d\d:\d\d\)/);
    // The overlap is billed: the retiring instance's time in this run is part of the spend.
    expect(again.retiring?.since).toBe(again.recovered?.lastLostAt);

    const client = await testEnv().client();
    const report = await explainWorkflow(client, h.workflowId, name);
    const text = formatExplain(report);
    // For people: what `provision explain` says of a preempted, replaced VM.
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'explain-preempted.txt'), text);
    expect(text).toMatch(/recovered \(--recover\): 1 time; last lost [^:]+:\d\d:[\d.]+Z: preempted \(notice /);
    expect(text).toContain(`replaced: ${oldId} at fake/fake-a (preempted): deleted ${again.retiring!.goneAt}`);
    await down(h, name);
  });

  it('a deadline before the replacement is Ready: the old instance is deleted at the deadline', async () => {
    fake.setBootMs(0);
    const { h, name } = await start({});
    const first = await waitFor(h, (s) => s.stage === 'ready', 'ready', 30_000);
    const oldId = first.instanceIds[0]!;
    fake.setBootMs(8_000);
    const billed = sampleBilled(fake, name);
    const notice = fake.preempt(oldId, { noticeMs: 2_000 })!;
    const gone = await waitFor(h, (s) => s.retiring?.goneAt !== undefined, 'old instance deleted', 20_000);
    expect(gone.stage).not.toBe('ready');
    expect(Date.parse(gone.retiring!.goneAt!)).toBeGreaterThanOrEqual(Date.parse(notice.deadline!));
    expect(fake.live(name).some((i) => i.id === oldId)).toBe(false);
    await waitFor(h, readyAgain, 'replacement ready', 30_000);
    expect(billed.stop()).toBeLessThanOrEqual(2);
    await down(h, name);
  });

  it('preempted without a notice: the ordinary recovery (teardown, then relaunch), shown as preempted', async () => {
    fake.setBootMs(0);
    const { h, name } = await start({});
    const first = await waitFor(h, (s) => s.stage === 'ready', 'ready', 30_000);
    const billed = sampleBilled(fake, name);
    fake.preempt(first.instanceIds[0]!);
    const again = await waitFor(h, readyAgain, 'ready again', 30_000);
    expect(billed.stop()).toBeLessThanOrEqual(1);
    expect(again.retiring).toBeUndefined();
    expect(again.recovered?.lastCause).toMatchObject({ kind: 'preempted' });
    expect(again.recovered?.lastCause?.deadline).toBeUndefined();
    expect(again.recovered?.lastReason).toMatch(/^preempted \(notice \d\d:\d\d:\d\d\)/);
    await down(h, name);
  });

  it("spot 'auto' preempted spotAutoPreemptions times: the replacement is on-demand", async () => {
    fake.setBootMs(0);
    fake.setOffers([{ ...defaultFakeOffers()[0]!, market: 'spot', pricePerHour: 0.5, onDemandPricePerHour: 2 }, ...defaultFakeOffers()]);
    try {
      const { h, name } = await start({ spot: 'auto' }, { spotAutoPreemptions: 1 });
      const first = await waitFor(h, (s) => s.stage === 'ready', 'ready', 30_000);
      expect(first.offer?.market).toBe('spot');
      fake.preempt(first.instanceIds[0]!, { noticeMs: 20_000 });
      const again = await waitFor(h, readyAgain, 'replacement ready', 30_000);
      expect(again.recovered?.onDemand).toBe(true);
      expect(again.offer?.market ?? 'on-demand').toBe('on-demand');
      expect(again.spec.spot).toBe('auto'); // the user's spec is unchanged; only this launch asked on-demand
      await down(h, name);
    } finally {
      fake.setOffers(defaultFakeOffers());
    }
  });
});
