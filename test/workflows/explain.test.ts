import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServer, testEnv } from '../harness/temporal';
import { explainWorkflow } from '../../src/client/commands/explain';
import { formatExplain } from '../../src/client/explain-report';
import { startLab, waitStage, type Lab } from './helpers';

describe.skipIf(!requireServer())('provision explain on the dev server (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('failover (Capacity, then a winner): plan order, attempts, block, clean-up, winner, spend; again once the VM ended', async () => {
    lab.fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity' });
    const h = await lab.start({ name: 'expl1', k8s: 'off' });
    await waitStage(h, 'ready');
    const client = await testEnv().client();

    const r = await explainWorkflow(client, h.workflowId, 'expl1');
    expect(r.execution).toBe('running');
    expect(r.plans).toHaveLength(1);
    expect(r.plans[0]!.offers.map((o) => [o.offer, o.pricePerHour, o.why, o.fate])).toEqual([
      ['fake/fake-a/-/gpu-1', 2, '1st cheapest', 'attempt 1: failed (Capacity at create)'],
      ['fake/fake-a/-/gpu-2', 2.5, '2nd cheapest', 'attempt 2: ready'],
      ['fake/fake-b/-/gpu-1', 3, '3rd cheapest', 'not needed: an earlier offer won'],
      ['fake/fake-b/-/gpu-2', 3.5, '4th cheapest', 'not needed: an earlier offer won'],
    ]);
    expect(r.attempts.map((a) => [a.index, a.outcome, a.kind, a.blocked, a.compensated])).toEqual([
      [0, 'failed', 'Capacity', 'offer', true],
      [1, 'ready', undefined, undefined, false],
    ]);
    expect(r.attempts[0]!.message).toBeTruthy();
    expect(r.attempts[1]!.createdAt).toBeDefined();
    expect(r.blocks).toMatchObject([{ byAttempt: 1, scope: 'offer', kind: 'Capacity', what: 'fake/fake-a/-/gpu-1' }]);
    expect(r.cleanups.map((c) => [c.of, c.outcome])).toEqual([['attempt 1', 'done']]);
    expect(r.winner).toMatchObject({ offer: 'fake/fake-a/-/gpu-2', pricePerHour: 2.5 });
    expect(r.winner!.instanceId).toBe(lab.fake.live('expl1')[0]!.id);
    expect(r.timeToReadyMs).toBeGreaterThan(0);
    // Capacity at create handed over no instance: nothing billed; the winner is billed and still running.
    expect(r.spend.attempts.map((a) => [a.billedMs === 0, a.running])).toEqual([
      [true, false],
      [false, true],
    ]);
    expect(r.spend.ratePerHour).toBe(2.5);

    await h.signal('teardown');
    await h.result();
    const closed = await explainWorkflow(client, h.workflowId, 'expl1');
    expect(closed).toMatchObject({ execution: 'completed', stage: 'terminated' });
    expect(closed.cleanups.map((c) => [c.of, c.outcome])).toEqual([
      ['attempt 1', 'done'],
      ['the VM', 'done'],
    ]);
    expect(closed.spend.attempts[1]!.running).toBe(false);
    const text = formatExplain(closed);
    expect(text).toContain('attempt 1: failed (Capacity at create)');
    expect(text).toContain('winner: fake/fake-a/-/gpu-2 at $2.50/h');
    if (process.env.GPUPROV_SHOW_EXPLAIN) process.stdout.write(text);
  });
});
