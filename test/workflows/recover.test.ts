/**
 * `--recover` on the fake cloud: a Ready VM told `instanceLost` is torn down and launched again
 * under the same name (same workflow ID, a new run, a new instance; one instance at the cloud);
 * past the bound, or when a teardown arrives during the loss's clean-up, it stays `lost` and ends.
 * `list` (memo) and `explain` show the recovery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceLostSignal, teardownSignal, type VmStatus } from '../../src/core/api';
import { GpuprovClient } from '../../src/client/client';
import { explainWorkflow } from '../../src/client/commands/explain';
import { formatExplain } from '../../src/client/explain-report';
import { requireServer, testEnv } from '../harness/temporal';
import { startLab, waitFor, waitStage, type Lab } from './helpers';

/** No backstop health check within a test: only the signal (the account watcher's) reports a loss. */
const QUIET = { healthIntervalMs: 3_600_000 };

describe.skipIf(!requireServer())('--recover on the dev server (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(async () => {
    await lab?.stop();
  });

  const readyAgain = (count: number) => (s: VmStatus) => s.stage === 'ready' && s.recovered?.count === count;

  it('a lost Ready VM is Ready again under the same name on a new instance; the old one is deleted; one instance at the cloud', async () => {
    const h = await lab.start({ name: 'rec1', k8s: 'off', recover: true }, QUIET);
    const first = await waitStage(h, 'ready');
    const oldId = first.instanceIds[0]!;
    const firstRun = (await h.describe()).runId;
    // The instance is still listed (as a Failed one would be): the loss's teardown must delete it.
    await h.signal(instanceLostSignal, { instanceIds: [oldId], reason: 'test: the host failed' });
    const again = await waitFor(h, readyAgain(1), 'ready again after one recovery');
    expect(again.name).toBe('rec1');
    expect(again.instanceIds).toHaveLength(1);
    expect(again.instanceIds[0]).not.toBe(oldId);
    expect(again.recovered).toMatchObject({ count: 1, lastReason: 'test: the host failed', lastCause: { kind: 'failed', detail: 'test: the host failed' } });
    expect(again.attempts).toHaveLength(1); // a fresh plan and search, not the lost run's table
    expect(lab.fake.live('rec1').map((i) => i.id)).toEqual(again.instanceIds);
    expect(lab.fake.callsOf('delete').filter((c) => c.vmName === 'rec1')).not.toHaveLength(0);
    const d = await h.describe();
    expect(d.workflowId).toBe(h.workflowId);
    expect(d.runId).not.toBe(firstRun);

    // `list` reads the count from the run's memo; `explain` from the status.
    const client = new GpuprovClient(await testEnv().client());
    let row: Awaited<ReturnType<GpuprovClient['list']>>[number] | undefined;
    for (let i = 0; i < 100 && !row?.recovered; i++) {
      row = (await client.list()).find((r) => r.workflowId === h.workflowId);
      if (!row?.recovered) await new Promise((r) => setTimeout(r, 200));
    }
    expect(row?.recovered).toMatchObject({ count: 1, lastReason: 'test: the host failed' });
    const report = await explainWorkflow(client.temporal, h.workflowId, 'rec1');
    expect(report.recovered).toMatchObject({ count: 1 });
    expect(formatExplain(report)).toContain('recovered (--recover): 1 time; last lost');

    await h.signal(teardownSignal);
    const end = await h.result();
    expect(end.stage).toBe('terminated');
    expect(lab.fake.liveCount('rec1')).toBe(0);
  });

  it('after maxRecoveries losses the next one stays lost and ends, saying why', async () => {
    const h = await lab.start({ name: 'rec2', k8s: 'off', recover: true }, { ...QUIET, maxRecoveries: 2 });
    let s = await waitStage(h, 'ready');
    for (let n = 1; n <= 2; n++) {
      lab.fake.vanish(s.instanceIds[0]!);
      await h.signal(instanceLostSignal, { instanceIds: [], reason: `test: loss ${n}` });
      s = await waitFor(h, readyAgain(n), `ready after recovery ${n}`);
      expect(lab.fake.liveCount('rec2')).toBe(1);
    }
    lab.fake.vanish(s.instanceIds[0]!);
    // Losses 1 and 2 came in the older shape (`reason` only), this one with a structured cause.
    await h.signal(instanceLostSignal, { instanceIds: [], cause: { kind: 'stopped', detail: 'test: loss 3' } });
    const end = await h.result();
    expect(end.stage).toBe('lost');
    expect(end.error).toMatchObject({ kind: 'InstanceLost', message: 'test: loss 3' });
    expect(end.lossCause).toEqual({ kind: 'stopped', detail: 'test: loss 3' });
    expect(end.recovered).toMatchObject({
      count: 2,
      lastReason: 'test: loss 3',
      lastCause: { kind: 'stopped', detail: 'test: loss 3' },
      gaveUp: expect.stringContaining('bound is 2'),
    });
    expect(lab.fake.liveCount('rec2')).toBe(0);
  });

  it('a teardown asked while the lost remains are being deleted wins: no relaunch', async () => {
    const h = await lab.start({ name: 'rec4', k8s: 'off', recover: true }, QUIET);
    const s = await waitStage(h, 'ready');
    // The loss's teardown cannot delete (leaked, retrying) until the user's `down` retries it.
    lab.fake.script({ primitive: 'delete', region: 'fake-a', error: 'Transient', times: -1 });
    await h.signal(instanceLostSignal, { instanceIds: s.instanceIds, reason: 'test: gone' });
    await waitStage(h, 'leaked');
    lab.fake.clearRules();
    await h.signal(teardownSignal);
    const end = await h.result();
    expect(end.stage).toBe('lost');
    expect(end.recovered).toMatchObject({ count: 0, gaveUp: expect.stringContaining('teardown') });
    expect(lab.fake.liveCount('rec4')).toBe(0);
    expect(lab.fake.callsOf('create').filter((c) => c.vmName === 'rec4')).toHaveLength(1);
  });

  it('without --recover a lost VM still ends lost (no relaunch)', async () => {
    const h = await lab.start({ name: 'rec3', k8s: 'off' }, QUIET);
    const s = await waitStage(h, 'ready');
    await h.signal(instanceLostSignal, { instanceIds: s.instanceIds, reason: 'test: gone' });
    const end = await h.result();
    expect(end.stage).toBe('lost');
    expect(end.recovered).toBeUndefined();
    expect(lab.fake.liveCount('rec3')).toBe(0);
    expect(lab.fake.callsOf('create').filter((c) => c.vmName === 'rec3')).toHaveLength(1);
  });
});
