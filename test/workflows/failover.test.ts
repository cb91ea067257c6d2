import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServer } from '../harness/temporal';
import type { WorkflowHandle } from '@temporalio/client';
import { startLab, waitStage, type Lab } from './helpers';

describe.skipIf(!requireServer())('launch failover on the dev server (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('capacity on offer 1 → compensated → offer 2 ready; both attempts recorded', async () => {
    lab.fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', ambiguous: true });
    const h = await lab.start({ name: 'cap1', k8s: 'off' });
    const s = await waitReady(h);
    expect(s.attempts.map((a) => [a.offer.instanceType, a.offer.region, a.outcome, a.kind])).toEqual([
      ['gpu-1', 'fake-a', 'failed', 'Capacity'],
      ['gpu-2', 'fake-a', 'ready', undefined],
    ]);
    expect(s.attempts[0]!.compensated).toBe(true);
    expect(lab.fake.liveCount('cap1')).toBe(1);
    expect(lab.fake.live('cap1')[0]!.instanceType).toBe('gpu-2');
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('cap1')).toBe(0);
    expect(lab.fake.sideResources().filter((r) => r.startsWith('cap1@'))).toEqual([]);
  });

  it('quota in region A → every type in A skipped → region B', async () => {
    lab.fake.script({ primitive: 'create', region: 'fake-a', error: 'Quota', times: 1 });
    const h = await lab.start({ name: 'quota1', k8s: 'off' });
    const s = await waitReady(h);
    expect(s.attempts.map((a) => `${a.offer.region}/${a.offer.instanceType}:${a.outcome}`)).toEqual(['fake-a/gpu-1:failed', 'fake-b/gpu-1:ready']);
    expect(lab.fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'quota1' && c.region === 'fake-a')).toHaveLength(1);
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('quota1')).toBe(0);
  });

  it('Unavailable at prepare → next offer, and delete never called for it', async () => {
    lab.fake.script({ primitive: 'prepare', region: 'fake-a', instanceType: 'gpu-1', error: 'Unavailable' });
    const h = await lab.start({ name: 'unav1', k8s: 'off' });
    const s = await waitReady(h);
    expect(s.attempts.map((a) => a.outcome)).toEqual(['unavailable', 'ready']);
    const deletes = lab.fake.calls.filter((c) => c.primitive === 'delete' && c.vmName === 'unav1');
    expect(deletes).toEqual([]);
    await h.signal('teardown');
    await h.result();
  });

  it('create succeeds at the cloud but its activity fails (ambiguous) → the retry adopts it: one instance', async () => {
    lab.fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Transient', ambiguous: true });
    const h = await lab.start({ name: 'amb1', k8s: 'off' });
    const s = await waitReady(h);
    expect(s.attempts).toHaveLength(1);
    expect(lab.fake.liveCount('amb1')).toBe(1);
    expect(lab.fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'amb1')).toHaveLength(1);
    expect(s.instanceIds).toEqual([lab.fake.live('amb1')[0]!.id]);
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('amb1')).toBe(0);
  });

  it('Credentials error after create → compensated → aborted, zero instances', async () => {
    lab.fake.setBootMs(400);
    lab.fake.script({ primitive: 'observe', region: 'fake-a', error: 'Credentials', times: 1, skip: 1 });
    const h = await lab.start({ name: 'cred1', k8s: 'off' });
    const err = await h.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    lab.fake.setBootMs(0);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as { type?: string; details?: unknown[] };
    expect(cause.type).toBe('LaunchFailed');
    const details = cause.details?.[0] as { reason: string; attempts: { kind: string; compensated: boolean }[] };
    expect(details.reason).toBe('fatal');
    expect(details.attempts.map((a) => [a.kind, a.compensated])).toEqual([['Credentials', true]]);
    expect(lab.fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'cred1')).toHaveLength(1);
    expect(lab.fake.liveCount('cred1')).toBe(0);
  });

  it('every offer exhausted without retryUntilUp fails with the attempts table', async () => {
    lab.fake.script({ primitive: 'create', error: 'Capacity', times: 4 });
    const h = await lab.start({ name: 'exh1', k8s: 'off' });
    const err = (await h.result().then(
      () => undefined,
      (e: unknown) => e,
    )) as WorkflowFailedError;
    const cause = err.cause as { type?: string; message: string; details?: unknown[] };
    expect(cause.type).toBe('LaunchFailed');
    expect(cause.message).toContain('#4 fake/fake-b/-/gpu-2: failed (Capacity at create)');
    expect((cause.details?.[0] as { attempts: unknown[] }).attempts).toHaveLength(4);
    expect(lab.fake.liveCount('exh1')).toBe(0);
  });

  it('retryUntilUp: every offer exhausted, then capacity appears → ready', async () => {
    lab.fake.script({ primitive: 'create', error: 'Capacity', times: -1 });
    const h = await lab.start({ name: 'rtu1', k8s: 'off', retryUntilUp: true });
    await waitStage(h, 'waiting-retry');
    lab.fake.clearRules();
    const s = await waitReady(h);
    expect(s.attempts.length).toBeGreaterThan(4);
    expect(s.attempts.at(-1)!.outcome).toBe('ready');
    expect(lab.fake.liveCount('rtu1')).toBe(1);
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('rtu1')).toBe(0);
  });

  const waitReady = (h: WorkflowHandle) => waitStage(h, 'ready');
});
