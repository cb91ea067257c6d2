/**
 * A slot whose VM ends its k3s step `k8s-failed` (VM still up and billed), and the rule that a
 * slot is destroyed (and replaced) only once its child workflow has closed.
 */
import { describe, expect, it } from 'vitest';
import { parseShape } from '../../../../src/client/fleet-schema';
import { backoffMs } from '../../../../src/core/fleet/backoff';
import { eventOfChild } from '../../../../src/core/fleet/child-events';
import { decideSlot, isConverged, reconcile } from '../../../../src/core/fleet/reconcile';
import { applyAction, carryOver, emptyState, fold, type FleetEvent, type FleetState } from '../../../../src/core/fleet/state';
import { checkRevision, expandShape, shapeProblems, type FleetShape } from '../../../../src/core/fleet/types';
import { T, rec, want } from './fixtures';

const NOW = 100_000;
const SLOT = 'f-web-0';
const at = (attempt: number) => ({ slot: SLOT, attempt });
const k8sFailed = (attempt = 1): FleetEvent => ({ type: 'vmK8sFailed', ...at(attempt), reason: 'k3s failed: no nvidia.com/gpu' });
const ended = (attempt = 1, closed = false): FleetEvent => ({ type: 'vmEnded', ...at(attempt), outcome: 'terminated', closed });

function fleet(onK8sFailure?: 'keep' | 'teardown', generation = 1): FleetShape {
  return { name: 'f', generation, groups: [{ id: 'web', role: 'web', count: 1, vm: {}, ...(onK8sFailure ? { onK8sFailure } : {}) }] };
}

/** Apply every action of each pass until only effects or waits are left; returns the effects taken. */
function settle(s: FleetState, shape: FleetShape, now: number): { s: FleetState; effects: string[] } {
  const d = expandShape(shape);
  const effects: string[] = [];
  for (let i = 0; i < 20; i++) {
    const p = reconcile(s, d, now);
    for (const a of p.actions) {
      s = applyAction(s, a, d, now, T);
      if ('attempt' in a) effects.push(`${a.kind}#${a.attempt}`);
    }
    if (!p.actions.some((a) => !('attempt' in a))) break;
  }
  return { s, effects };
}

/** A fleet of one slot whose attempt 1 reached `k8s-failed` in the run that started it. */
function k8sFailedFleet(shape: FleetShape): FleetState {
  let { s } = settle(emptyState('f'), shape, 0);
  s = fold(s, { type: 'vmStarted', ...at(1) }, 1, T);
  return fold(s, k8sFailed(), 2, T);
}

describe('the k8s-failed rows', () => {
  it('fold: the VM stays up, not ready, stage k8s-failed, the reason kept', () => {
    const s = k8sFailedFleet(fleet());
    expect(s.slots[SLOT]).toMatchObject({
      vm: 'up',
      ready: false,
      stage: 'k8s-failed',
      k8sFailed: 'k3s failed: no nvidia.com/gpu',
      failedReason: 'k3s failed: no nvidia.com/gpu',
      failures: 0,
    });
    expect(isConverged(s, expandShape(fleet()))).toBe(false);
  });

  it('row 4 (default teardown): begin delete, counted as a failed attempt', () => {
    const r = rec({ ready: false, stage: 'k8s-failed', k8sFailed: 'k3s failed' });
    expect(decideSlot(r, want(0), NOW)).toMatchObject({ row: 4, action: { kind: 'beginDelete', why: 'k8s-failed' } });
    expect(decideSlot(r, { ...want(0), onK8sFailure: 'teardown' }, NOW)).toMatchObject({ row: 4 });
    const s = applyAction({ ...emptyState('f'), slots: { [SLOT]: r } }, { kind: 'beginDelete', slot: SLOT, why: 'k8s-failed' }, new Map(), NOW, T);
    expect(s.slots[SLOT]).toMatchObject({ intent: 'deleting', stage: 'failed', failures: 1, failedReason: 'k3s failed' });
  });

  it('row 12 (onK8sFailure: keep): the VM is held for inspection, nothing started, not ready', () => {
    const r = rec({ ready: false, stage: 'k8s-failed', k8sFailed: 'k3s failed' });
    expect(decideSlot(r, { ...want(0), onK8sFailure: 'keep' }, NOW)).toEqual({ slot: SLOT, row: 12 });
    const s = k8sFailedFleet(fleet('keep'));
    expect(settle(s, fleet('keep'), 3)).toEqual({ s, effects: [] });
  });

  it('a kept VM is torn down when its slot goes away, and when the policy becomes teardown (no other VM replaced)', () => {
    const s = k8sFailedFleet(fleet('keep'));
    expect(settle(s, { ...fleet('keep', 2), groups: [] }, 3).effects).toEqual(['teardownVm#1']);
    expect(checkRevision(fleet('keep'), fleet('teardown', 1)).ok).toBe(false); // a policy change needs a new generation
    expect(settle(s, fleet('teardown', 2), 3).effects).toEqual(['teardownVm#1']);
    // the policy is not part of the VM spec: a ready slot is not replaced when it changes
    expect(expandShape(fleet('keep')).get(SLOT)!.key).toBe(expandShape(fleet()).get(SLOT)!.key);
  });

  it('k8s-failed on a slot already being deleted: it stays deleting and its VM is torn down', () => {
    const launching = fold(settle(emptyState('f'), fleet(), 0).s, { type: 'vmStarted', ...at(1) }, 1, T);
    const { s, effects } = settle(launching, { ...fleet(undefined, 2), groups: [] }, 2);
    expect(effects).toEqual(['teardownVm#1']);
    const after = fold(s, k8sFailed(), 3, T);
    expect(after.slots[SLOT]).toMatchObject({ intent: 'deleting', stage: 'deleting', vm: 'up', failures: 0, pending: { op: 'teardownVm' } });
    expect(reconcile(after, new Map(), 3).actions).toEqual([]); // the teardown already sent is awaited
  });
});

describe('destroyed only after the child workflow has closed', () => {
  it('teardown: the reported end waits for the completion; the replacement starts after it and the backoff', () => {
    let { s, effects } = settle(k8sFailedFleet(fleet()), fleet(), 3);
    expect(effects).toEqual(['teardownVm#1']);
    s = fold(s, { type: 'teardownSent', ...at(1) }, 4, T); // delivered: the child is tearing down
    expect(s.slots[SLOT]!.pending?.op).toBe('teardownVm');
    s = fold(s, ended(1, false), 5, T);
    expect(s.slots[SLOT]).toMatchObject({ vm: 'ended', resultAwaited: true });
    expect(reconcile(s, expandShape(fleet()), 5).decisions[0]).toEqual({ slot: SLOT, row: 9 });
    expect(fold(s, ended(1, false), 6, T)).toBe(s); // a duplicate report changes nothing
    s = fold(s, ended(1, true), 7, T);
    ({ s, effects } = settle(s, fleet(), 7));
    expect(effects).toEqual([]);
    const r = s.slots[SLOT]!;
    expect(r).toMatchObject({ stage: 'destroyed', vm: 'gone', failures: 1 });
    expect(r.restartAt).toBe(7 + backoffMs(T, 1, SLOT, 1));
    ({ s, effects } = settle(s, fleet(), r.restartAt!));
    expect(effects).toEqual(['startVm#2']);
    expect(s.slots[SLOT]).toMatchObject({ attempt: 2, failures: 1 });
  });

  it('after continue-as-new no run awaits the completion: the teardown signal probes until it fails (closed)', () => {
    let s = carryOver(settle(k8sFailedFleet(fleet()), fleet(), 3).s);
    expect(s.slots[SLOT]!.resultAwaited).toBeUndefined();
    s = fold(s, ended(1, false), 5, T);
    let effects: string[];
    ({ s, effects } = settle(s, fleet(), 5));
    expect(effects).toEqual(['teardownVm#1']); // the probe
    s = fold(s, { type: 'teardownSent', ...at(1) }, 6, T); // still open: try again on the cleanup backoff
    const retryAt = 6 + backoffMs(T, 1, SLOT, 1);
    expect(s.slots[SLOT]).toMatchObject({ retryAt, vm: 'ended' });
    expect(reconcile(s, expandShape(fleet()), 7)).toMatchObject({ actions: [], wakeAt: retryAt });
    ({ s, effects } = settle(s, fleet(), retryAt));
    expect(effects).toEqual(['teardownVm#1']);
    s = fold(s, { type: 'vmEnded', ...at(1), outcome: 'gone', closed: true }, retryAt + 1, T); // the signal failed: closed
    ({ s } = settle(s, fleet(), retryAt + 1));
    expect(s.slots[SLOT]!.stage).toBe('destroyed');
  });

  it('markDestroyed is refused while the child may be open', () => {
    for (const vm of ['launching', 'up', 'ended'] as const) {
      const s = { ...emptyState('f'), slots: { [SLOT]: rec({ intent: 'deleting', ready: false, vm }) } };
      expect(applyAction(s, { kind: 'markDestroyed', slot: SLOT }, new Map(), NOW, T)).toBe(s);
    }
  });

  it('fleet down: a failed launch is destroyed only once its child has closed', () => {
    let { s } = settle(emptyState('f'), fleet(), 0);
    s = fold(s, { type: 'vmStarted', ...at(1) }, 1, T);
    s = fold(s, { type: 'vmEnded', ...at(1), outcome: 'failed', closed: false }, 2, T);
    const down = { ...fleet(undefined, 2), groups: [] };
    ({ s } = settle(s, down, 3));
    expect(s.slots[SLOT]).toMatchObject({ intent: 'deleting', vm: 'ended' });
    s = fold(s, { type: 'vmEnded', ...at(1), outcome: 'failed', closed: true }, 4, T);
    ({ s } = settle(s, down, 4));
    expect(s.slots).toEqual({});
  });
});

describe('a child report as a fleet event', () => {
  const id = 'vm-f-web-0-a3';
  it('k8s-failed is not an end: the VM is still up', () => {
    expect(eventOfChild({ workflowId: id, stage: 'k8s-failed', endpoint: { host: 'h', port: 22 } })).toEqual({
      type: 'vmK8sFailed',
      slot: SLOT,
      attempt: 3,
      reason: 'k3s failed',
      endpoint: { host: 'h', port: 22 },
    });
  });
  it('a reported end is not a close', () => {
    expect(eventOfChild({ workflowId: id, stage: 'terminated' })).toEqual({
      type: 'vmEnded',
      slot: SLOT,
      attempt: 3,
      outcome: 'terminated',
      closed: false,
    });
  });
  it('ignores other stages and foreign IDs', () => {
    expect(eventOfChild({ workflowId: id, stage: 'ready', endpoint: { host: 'h', port: 22 } })).toMatchObject({ type: 'vmReady' });
    expect(eventOfChild({ workflowId: id, stage: 'k8s' })).toBeUndefined();
    expect(eventOfChild({ workflowId: 'vm-gpu1', stage: 'terminated' })).toBeUndefined();
  });
});

describe('the onK8sFailure option', () => {
  it('parses keep and teardown; rejects anything else', () => {
    const g = { id: 'web', role: 'web', count: 1, vm: {} };
    expect(expandShape(parseShape({ name: 'f', generation: 1, groups: [{ ...g, onK8sFailure: 'keep' }] })).get(SLOT)!.onK8sFailure).toBe('keep');
    expect(expandShape(parseShape({ name: 'f', generation: 1, groups: [g] })).get(SLOT)!.onK8sFailure).toBeUndefined();
    expect(() => parseShape({ name: 'f', generation: 1, groups: [{ ...g, onK8sFailure: 'retry' }] })).toThrow('onK8sFailure');
    expect(shapeProblems({ name: 'f', generation: 1, groups: [{ ...g, onK8sFailure: 'retry' as 'keep' }] })).toEqual([expect.stringContaining('onK8sFailure')]);
  });
});
