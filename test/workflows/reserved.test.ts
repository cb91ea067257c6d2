/**
 * Reserved capacity through the real vmWorkflow on the time-skipping test server (issue 31): a
 * capacity block three days ahead (bought once, waited for durably, launched at its start, warned
 * and torn down before its end), a cancel while waiting, a full reservation (Capacity, never an
 * on-demand launch), and a queue that is never served (Capacity after --wait, then the ordinary search).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelSignal, statusQuery, vmWorkflowId, type VmSpec, type VmStatus } from '../../src/core/api';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { vmWorkflow } from '../../src/workflows';
import { explainWorkflow } from '../../src/client/commands/explain';
import { formatExplain } from '../../src/client/explain-report';
import { FakeProvider } from '../harness/fake-provider';
import { serverClock, startSkipping, timeSkippingServer, type SkippingLab } from '../harness/time-skipping';
import { FAST } from './helpers';

const H = 3_600_000;
const server = timeSkippingServer();

describe.skipIf(!server)('reserved capacity on the time-skipping server', () => {
  let lab: SkippingLab;
  let fake: FakeProvider;

  beforeAll(async () => {
    fake = new FakeProvider({ clock: serverClock(), reserved: {} });
    const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-test-keys-')));
    lab = await startSkipping(server!, { registry: new ProviderRegistry([fake]), ssh, prober: fake.prober() });
  }, 120_000);
  afterAll(async () => lab?.stop());

  const start = (spec: Partial<VmSpec> & { name: string }) =>
    lab.env.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: lab.taskQueue,
      workflowId: `${vmWorkflowId(spec.name)}-${randomUUID().slice(0, 6)}`,
      args: [{ spec: { k8s: 'off', ...spec }, tuning: { ...FAST, healthIntervalMs: 6 * H } }],
    });
  const until = async (h: { query: (q: typeof statusQuery) => Promise<VmStatus> }, pred: (s: VmStatus) => boolean, what: string): Promise<VmStatus> => {
    let last: VmStatus | undefined;
    for (let i = 0; i < 300; i++) {
      last = await h.query(statusQuery).catch(() => undefined);
      if (last && pred(last)) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (process.env.RF_DEBUG) console.log(JSON.stringify(last, null, 1));
    throw new Error(`timed out waiting for ${what}; last stage ${last?.stage ?? 'none'} ${JSON.stringify(last?.error ?? {})}`);
  };

  it('buys a block three days ahead once, waits for it, launches at its start, warns and tears down before its end', async () => {
    const now = await lab.env.currentTimeMs();
    const startMs = now + 72 * H;
    const endMs = startMs + 24 * H;
    fake.setReserved((r) => {
      r.forSale = [
        {
          offeringId: 'cbo-3d',
          cloud: 'fake',
          region: 'fake-a',
          instanceType: 'gpu-1',
          count: 1,
          start: new Date(startMs).toISOString(),
          end: new Date(endMs).toISOString(),
          durationHours: 24,
          upfrontPrice: 700,
          currency: 'USD',
        },
      ];
    });
    const h = await start({
      name: 'block3d',
      gpu: { model: 'H100', count: 1 },
      reserved: { kind: 'capacity-block', offeringId: 'cbo-3d', query: { count: 1, durationHours: 24 } },
    });
    const waiting = await until(h, (s) => s.stage === 'waiting-window', 'waiting-window');
    expect(waiting.reserved?.wait?.line).toBe(`waiting for block fake-cb-1, starts at ${new Date(startMs).toISOString()}`);
    expect(waiting.reserved?.block).toMatchObject({ offeringId: 'cbo-3d', upfrontPrice: 700 });
    expect(fake.callsOf('buy')).toHaveLength(1);
    expect(fake.callsOf('create')).toHaveLength(0);

    await lab.env.sleep(72 * H + 60_000);
    const ready = await until(h, (s) => s.stage === 'ready', 'ready');
    await lab.quietWatcher('fake', 'fake-a');
    expect(ready.ttlExpiresAt).toBe(new Date(endMs - 20 * 60_000).toISOString());
    expect(ready.reserved?.leave?.line).toMatch(/the capacity block fake-cb-1 ends at/);

    const end = await h.result();
    expect(end.stage).toBe('terminated');
    expect(end.reserved?.leave?.warnedAt).toBeDefined();
    const create = fake.callsOf('create')[0]!;
    expect(create.at).toBeGreaterThanOrEqual(startMs);
    const deleted = fake.callsOf('delete').filter((c) => (c.removed ?? []).length > 0);
    expect(deleted.length).toBeGreaterThan(0);
    expect(Math.max(...deleted.map((c) => c.at))).toBeLessThan(endMs);
    expect(fake.liveCount('block3d')).toBe(0);
    expect(fake.callsOf('buy')).toHaveLength(1);

    // The history reads sleep → launch → warning → teardown.
    const events = (await h.fetchHistory()).events ?? [];
    const story = events.flatMap((e) => {
      const summary = e.userMetadata?.summary?.data ? Buffer.from(e.userMetadata.summary.data).toString() : '';
      if (e.timerStartedEventAttributes && /waiting for block|warning/.test(summary)) return [summary.includes('waiting') ? 'sleep' : 'warning'];
      const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
      if (type === 'prepareAndCreate') return ['launch'];
      if (type === 'releaseAt') return ['teardown'];
      return [];
    });
    expect(story.filter((s, i) => s !== story[i - 1])).toEqual(['sleep', 'launch', 'warning', 'teardown']);

    // `explain` tells the block bought and used, the wait for its window, and the spend with its upfront price.
    const report = await explainWorkflow(lab.env.client, h.workflowId, 'block3d', await lab.env.currentTimeMs());
    const text = formatExplain(report);
    if (process.env.GPUPROV_SHOW_EXPLAIN) process.stdout.write(`\n$ provision explain block3d\n${text}`);
    const at = (ms: number): string => new Date(ms).toISOString();
    expect(text).toMatch(/reserved: capacity block cbo-3d bought \S+ for \$700 upfront/);
    expect(text).toContain(`reserved: capacity-block fake-cb-1 at fake/fake-a, window ${at(startMs)} to ${at(endMs)}`);
    expect(text).toMatch(/reserved: waited for the window from \S+ until \S+/);
    expect(text).toMatch(/spend: .*incl\. \$700\.00 paid upfront for the capacity block/);
    expect(report.winner?.offer).toMatch(/^fake\/fake-a\/.*gpu-1/);
  }, 300_000);

  it('cancels while waiting for a window: nothing created, ends cancelled', async () => {
    const now = await lab.env.currentTimeMs();
    fake.setReserved((r) => {
      r.reservations.push({
        info: {
          id: 'cb-wait',
          kind: 'capacity-block',
          total: 1,
          free: 1,
          start: new Date(now + 48 * H).toISOString(),
          end: new Date(now + 72 * H).toISOString(),
        },
        region: 'fake-a',
        instanceType: 'gpu-1',
        gpu: { model: 'H100', count: 1 },
      });
    });
    const creates = fake.callsOf('create').length;
    const h = await start({ name: 'waitcancel', gpu: { model: 'H100', count: 1 }, reserved: { kind: 'reservation', id: 'cb-wait' } });
    const waiting = await until(h, (s) => s.stage === 'waiting-window', 'waiting-window');
    expect(waiting.reserved?.wait?.line).toMatch(/^waiting for block cb-wait, starts at /);
    await h.signal(cancelSignal);
    const end = await h.result();
    expect(end.stage).toBe('cancelled');
    expect(fake.callsOf('create')).toHaveLength(creates);
    expect(fake.liveCount('waitcancel')).toBe(0);
  }, 300_000);

  it('a full reservation answers Capacity and launches nothing on-demand', async () => {
    fake.setReserved((r) => {
      r.reservations.push({
        info: { id: 'cr-full', kind: 'capacity-reservation', total: 1, free: 1 },
        region: 'fake-b',
        instanceType: 'gpu-2',
        gpu: { model: 'H100', count: 1 },
      });
    });
    const first = await start({ name: 'fills', gpu: { model: 'H100', count: 1 }, reserved: { kind: 'reservation', id: 'cr-full' } });
    await until(first, (s) => s.stage === 'ready', 'the first VM ready');
    await lab.quietWatcher('fake', 'fake-b');
    const second = await start({ name: 'nofit', gpu: { model: 'H100', count: 1 }, reserved: { kind: 'reservation', id: 'cr-full' } });
    const failed = await second.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeDefined();
    const s = await second.query(statusQuery);
    expect(s.stage).toBe('failed');
    expect(s.attempts.map((a) => [a.offer.market, a.kind])).toEqual([['reserved', 'Capacity']]);
    expect(s.error?.message).toMatch(/cr-full is full/);
    const creates = fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'nofit');
    expect(creates.map((c) => [c.market, c.error])).toEqual([['reserved', 'Capacity']]);
    expect(fake.liveCount('nofit')).toBe(0);
    await first.signal(cancelSignal);
  }, 300_000);

  it('refuses a block above --budget before buying anything (InvalidRequest)', async () => {
    const now = await lab.env.currentTimeMs();
    fake.setReserved((r) => {
      r.forSale.push({
        offeringId: 'cbo-dear',
        cloud: 'fake',
        region: 'fake-a',
        instanceType: 'gpu-1',
        count: 1,
        start: new Date(now + H).toISOString(),
        end: new Date(now + 25 * H).toISOString(),
        durationHours: 24,
        upfrontPrice: 900,
        currency: 'USD',
      });
    });
    const buys = fake.callsOf('buy').length;
    const h = await start({
      name: 'toodear',
      budgetUsd: 100,
      reserved: { kind: 'capacity-block', offeringId: 'cbo-dear', query: { count: 1, durationHours: 24 } },
    });
    await h.result().catch(() => undefined);
    const s = await h.query(statusQuery);
    expect(s.stage).toBe('failed');
    expect(s.error).toMatchObject({ kind: 'InvalidRequest', message: expect.stringContaining('more than --budget $100') });
    expect(fake.callsOf('buy')).toHaveLength(buys);
  }, 300_000);

  it('a queue that is never served: Capacity after --wait, then the ordinary offer', async () => {
    fake.setReserved((r) => (r.queue = {}));
    const h = await start({
      name: 'queued',
      gpu: { model: 'H100', count: 1 },
      regions: ['fake-a'],
      instanceTypes: ['gpu-1'],
      reserved: { kind: 'queue', waitMs: 3_000 },
    });
    const ready = await until(h, (s) => s.stage === 'ready', 'ready on the ordinary offer');
    expect(ready.attempts.map((a) => [Boolean(a.offer.queued), a.outcome, a.kind])).toEqual([
      [true, 'failed', 'Capacity'],
      [false, 'ready', undefined],
    ]);
    expect(fake.live('queued').filter((i) => i.queued)).toHaveLength(0);
    fake.setReserved((r) => delete r.queue);
    await lab.quietWatcher('fake', 'fake-a');
    await h.signal(cancelSignal);
    await h.result();
  }, 300_000);
});
