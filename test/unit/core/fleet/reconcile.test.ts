import { describe, expect, it } from 'vitest';
import { backoffMs, hashFraction } from '../../../../src/core/fleet/backoff';
import { decideSlot, isConverged, reconcile } from '../../../../src/core/fleet/reconcile';
import { applyAction, emptyState, fold, type FleetState } from '../../../../src/core/fleet/state';
import { T, desiredOf, rec, shape, want } from './fixtures';

const NOW = 100_000;
const boot = { verify: [], start: 'x', ready: { command: 'true' }, timeout: 10 };

describe('the ladder: one row each (first match wins)', () => {
  it('row 0: a desired slot without a record is inserted', () => {
    expect(decideSlot(undefined, want(0), NOW)).toMatchObject({ row: 0, action: { kind: 'insert', slot: 'f-web-0' } });
  });
  it('row 1: a destroyed, undesired slot is reaped', () => {
    expect(decideSlot(rec({ stage: 'destroyed', vm: 'gone', ready: false, restartAt: NOW + 5 }), undefined, NOW)).toMatchObject({
      row: 1,
      action: { kind: 'reap' },
    });
  });
  it('row 2: a destroyed, desired slot restarts once restartAt is due', () => {
    expect(decideSlot(rec({ stage: 'destroyed', vm: 'gone', ready: false, restartAt: NOW }), want(0), NOW)).toMatchObject({
      row: 2,
      action: { kind: 'restart' },
    });
  });
  it('row 3: a destroyed, desired slot waits for its restart backoff', () => {
    expect(decideSlot(rec({ stage: 'destroyed', vm: 'gone', ready: false, restartAt: NOW + 700 }), want(0), NOW)).toEqual({
      slot: 'f-web-0',
      row: 3,
      wakeAt: NOW + 700,
    });
  });
  it('row 4: begin delete when undesired, when failed, or when the spec drifted', () => {
    expect(decideSlot(rec(), undefined, NOW)).toMatchObject({ row: 4, action: { kind: 'beginDelete', why: 'undesired' } });
    expect(decideSlot(rec({ stage: 'failed', ready: false }), want(0), NOW)).toMatchObject({ row: 4, action: { why: 'failed' } });
    expect(decideSlot(rec(), want(0, 'v2'), NOW)).toMatchObject({ row: 4, action: { why: 'drift' } });
    // beginDelete outranks a pending effect (the effect's result is still awaited afterwards)
    expect(decideSlot(rec({ pending: { op: 'startBootstrap', seq: 1, since: 0 } }), undefined, NOW)).toMatchObject({ row: 4 });
  });
  it('row 4 (drift) waits while another slot of the group is not ready (rolling replacement)', () => {
    expect(decideSlot(rec(), want(0, 'v2'), NOW, { groupBusy: true })).toEqual({ slot: 'f-web-0', row: 11 });
  });
  it('row 5: a pending effect is waited for', () => {
    expect(decideSlot(rec({ ready: false, stage: 'launching', vm: 'launching', pending: { op: 'startVm', seq: 1, since: 0 } }), want(0), NOW)).toEqual({
      slot: 'f-web-0',
      row: 5,
    });
  });
  it('row 6: a failed cleanup effect is retried only after its backoff', () => {
    expect(decideSlot(rec({ intent: 'deleting', ready: false, retryAt: NOW + 10 }), undefined, NOW)).toEqual({ slot: 'f-web-0', row: 6, wakeAt: NOW + 10 });
  });
  it('row 7: deleting with a bootstrap that may run on a reachable VM → stop it first', () => {
    expect(decideSlot(rec({ intent: 'deleting', ready: false, boot: { state: 'ready', started: true } }), undefined, NOW)).toMatchObject({
      row: 7,
      action: { kind: 'stopBootstrap', attempt: 1 },
    });
  });
  it('row 8: deleting with the VM launching or up → tear it down', () => {
    expect(decideSlot(rec({ intent: 'deleting', ready: false }), undefined, NOW)).toMatchObject({ row: 8, action: { kind: 'teardownVm' } });
    expect(decideSlot(rec({ intent: 'deleting', ready: false, vm: 'launching' }), undefined, NOW)).toMatchObject({ row: 8 });
    // a bootstrap on a VM that is already gone cannot be stopped by SSH: straight to row 10
    expect(decideSlot(rec({ intent: 'deleting', ready: false, vm: 'gone', boot: { state: 'running', started: true } }), undefined, NOW)).toMatchObject({
      row: 10,
    });
    // a child that reported its end, with no run awaiting its completion: the signal probes whether it has closed
    expect(decideSlot(rec({ intent: 'deleting', ready: false, vm: 'ended' }), undefined, NOW)).toMatchObject({ row: 8, action: { kind: 'teardownVm' } });
  });
  it('row 9: deleting, the child reported its end and this run awaits its completion → wait', () => {
    expect(decideSlot(rec({ intent: 'deleting', ready: false, vm: 'ended', resultAwaited: true }), want(0), NOW)).toEqual({ slot: 'f-web-0', row: 9 });
  });
  it('row 10: deleting with the child closed (or never started) → mark destroyed', () => {
    expect(decideSlot(rec({ intent: 'deleting', ready: false, vm: 'gone' }), want(0), NOW)).toMatchObject({ row: 10, action: { kind: 'markDestroyed' } });
    expect(decideSlot(rec({ intent: 'deleting', ready: false, vm: 'none' }), want(0), NOW)).toMatchObject({ row: 10, action: { kind: 'markDestroyed' } });
  });
  it('row 11: a ready slot needs nothing', () => {
    expect(decideSlot(rec(), want(0), NOW)).toEqual({ slot: 'f-web-0', row: 11 });
  });
  it('row 13: a slot without a VM starts one', () => {
    expect(decideSlot(rec({ stage: 'new', vm: 'none', ready: false }), want(0), NOW)).toMatchObject({ row: 13, action: { kind: 'startVm', attempt: 1 } });
  });
  it('row 14: a VM that is up with a bootstrap to run starts it', () => {
    const r = rec({ ready: false, stage: 'launching', template: { role: 'web', vm: {}, bootstrap: boot } });
    expect(decideSlot(r, { ...want(0), key: r.key }, NOW)).toMatchObject({ row: 14, action: { kind: 'startBootstrap' } });
  });
  it('row 15: otherwise (VM launching, bootstrap running) wait for events', () => {
    expect(decideSlot(rec({ ready: false, stage: 'launching', vm: 'launching' }), want(0), NOW)).toEqual({ slot: 'f-web-0', row: 15 });
  });
});

function settle(s: FleetState, d: ReturnType<typeof desiredOf>, now: number): FleetState {
  for (let i = 0; i < 20; i++) {
    const p = reconcile(s, d, now);
    if (!p.actions.length) break;
    for (const a of p.actions) s = applyAction(s, a, d, now, T);
  }
  return s;
}

describe('reconcile over a fleet', () => {
  it('scale-down removes only the highest indexes', () => {
    const d3 = desiredOf(shape(1, { web: 3 }));
    let s = settle(emptyState('f'), d3, 0);
    for (const r of Object.values(s.slots)) s = fold(s, { type: 'vmReady', slot: r.slot, attempt: r.attempt, endpoint: { host: 'h', port: 1 } }, 0, T);
    expect(isConverged(s, d3)).toBe(true);
    const p = reconcile(s, desiredOf(shape(2, { web: 1 })), 1);
    expect(p.actions.map((a) => `${a.kind}:${a.slot}`).sort()).toEqual(['beginDelete:f-web-1', 'beginDelete:f-web-2']);
  });

  it('a drifted group is replaced one slot at a time, lowest index first', () => {
    const d1 = desiredOf(shape(1, { web: 2 }));
    let s = settle(emptyState('f'), d1, 0);
    for (const r of Object.values(s.slots)) s = fold(s, { type: 'vmReady', slot: r.slot, attempt: r.attempt, endpoint: { host: 'h', port: 1 } }, 0, T);
    const d2 = desiredOf(shape(2, { web: 2 }, 'v2'));
    expect(reconcile(s, d2, 1).actions).toEqual([{ kind: 'beginDelete', slot: 'f-web-0', why: 'drift' }]);
    s = applyAction(s, { kind: 'beginDelete', slot: 'f-web-0', why: 'drift' }, d2, 1, T);
    // f-web-1 waits while f-web-0 is being replaced
    expect(reconcile(s, d2, 1).actions.map((a) => a.slot)).toEqual(['f-web-0']);
  });

  it('restart carries the failure count, takes a fresh attempt and the latest spec; ready resets it', () => {
    const d = desiredOf(shape(1, { web: 1 }));
    let s = settle(emptyState('f'), d, 0);
    s = fold(s, { type: 'vmEnded', slot: 'f-web-0', attempt: 1, outcome: 'failed', reason: 'x', closed: true }, 10, T);
    expect(s.slots['f-web-0']).toMatchObject({ stage: 'failed', failures: 1 });
    s = settle(s, d, 10);
    const r = s.slots['f-web-0']!;
    expect(r).toMatchObject({ stage: 'destroyed', failures: 1 });
    expect(r.restartAt! - 10).toBe(backoffMs(T, 1, 'f-web-0', 1));
    expect(reconcile(s, d, r.restartAt! - 1).actions).toEqual([]);
    const d2 = desiredOf(shape(2, { web: 1 }, 'v9'));
    s = settle(s, d2, r.restartAt!);
    expect(s.slots['f-web-0']).toMatchObject({ attempt: 2, failures: 1, key: d2.get('f-web-0')!.key, pending: { op: 'startVm' } });
    s = fold(s, { type: 'vmStarted', slot: 'f-web-0', attempt: 2 }, 0, T);
    s = fold(s, { type: 'vmReady', slot: 'f-web-0', attempt: 2, endpoint: { host: 'h', port: 1 } }, 0, T);
    expect(s.slots['f-web-0']).toMatchObject({ ready: true, failures: 0 });
  });

  it('events of a superseded attempt are discarded', () => {
    const d = desiredOf(shape(1, { web: 1 }));
    let s = settle(emptyState('f'), d, 0);
    s = { ...s, slots: { 'f-web-0': { ...s.slots['f-web-0']!, attempt: 7 } } };
    for (const e of [
      { type: 'vmReady', slot: 'f-web-0', attempt: 6, endpoint: { host: 'h', port: 1 } },
      { type: 'vmEnded', slot: 'f-web-0', attempt: 6, outcome: 'failed', closed: true },
      { type: 'vmK8sFailed', slot: 'f-web-0', attempt: 6, reason: 'k3s failed' },
      { type: 'teardownSent', slot: 'f-web-0', attempt: 6 },
      { type: 'bootDone', slot: 'f-web-0', attempt: 6, ok: true, stage: 'ready' },
    ] as const) {
      expect(fold(s, e, 0, T)).toBe(s);
    }
  });
});

describe('backoff', () => {
  it('doubles from 1 s to a 60 s cap, jitter from the attempt only', () => {
    const raw = [1, 2, 3, 4, 5, 6, 7, 8, 12].map((f) => backoffMs({ ...T, jitter: 0 }, f, 's', 1));
    expect(raw).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    const a = backoffMs(T, 3, 's', 41);
    expect(a).toBe(backoffMs(T, 3, 's', 41));
    expect(a).toBeGreaterThanOrEqual(4_000 * 0.8);
    expect(a).toBeLessThanOrEqual(4_000);
    const spread = new Set(Array.from({ length: 20 }, (_, i) => backoffMs(T, 3, 's', i)));
    expect(spread.size).toBeGreaterThan(10);
    expect(hashFraction('x')).toBeGreaterThanOrEqual(0);
    expect(hashFraction('x')).toBeLessThan(1);
  });
});
