/**
 * The fleet's observed state and the two pure ways it changes: `applyAction` (a transition, or
 * an effect recorded as pending before it is dispatched) and `fold` (an observation). Only the
 * driver (fleetWorkflow) calls them; events of a superseded attempt are discarded here.
 *
 * The shape and events are in ./slot.ts, the fold's one reducer per event kind in ./fold.ts;
 * both are re-exported here.
 *
 * A slot's child vmWorkflow is tracked apart from its instance: a child that reported its end
 * (`vm: 'ended'`) may still be open, and the slot is destroyed only once the child is `gone`
 * (closed). Until then no replacement starts: never two children of one slot at once.
 */
import { backoffMs, type FleetTuning } from './backoff';
import { failed, withSlot, type EffectKind, type FleetState, type SlotRecord } from './slot';
import type { DesiredSlot } from './types';

export type { BootFacts, EffectKind, FleetEvent, FleetState, SlotRecord, SlotStage, VmEnd } from './slot';
export { fold } from './fold';

export type Action =
  | { kind: 'insert'; slot: string }
  | { kind: 'reap'; slot: string }
  | { kind: 'restart'; slot: string }
  | { kind: 'beginDelete'; slot: string; why: 'undesired' | 'drift' | 'failed' | 'k8s-failed' }
  | { kind: 'markDestroyed'; slot: string }
  | { kind: EffectKind; slot: string; attempt: number };

/** Transitions complete the slot's step in the driver; effects are dispatched as I/O. */
export const isEffect = (a: Action): a is Extract<Action, { kind: EffectKind }> =>
  a.kind === 'startVm' || a.kind === 'startBootstrap' || a.kind === 'stopBootstrap' || a.kind === 'teardownVm';

/** Temporal workflow ID of one slot attempt (attempt-scoped: an old attempt can never touch a newer one). */
export const attemptWorkflowId = (slot: string, attempt: number): string => `vm-${slot}-a${attempt}`;

export function emptyState(name: string): FleetState {
  return { name, observedGeneration: -1, nextAttempt: 1, nextOpSeq: 1, slots: {} };
}

/** The state a continued-as-new run starts from: it awaits no child's completion (children report by signal). */
export function carryOver(s: FleetState): FleetState {
  const slots: Record<string, SlotRecord> = {};
  for (const [n, r] of Object.entries(s.slots)) {
    const { resultAwaited: _a, ...rest } = r;
    slots[n] = rest;
  }
  return { ...s, slots };
}

/** Open child workflow: dispatched and not seen closed. */
export const childOpen = (r: Pick<SlotRecord, 'vm'>): boolean => r.vm === 'launching' || r.vm === 'up' || r.vm === 'ended';

function fresh(d: DesiredSlot, attempt: number, failures: number): SlotRecord {
  return {
    slot: d.slot,
    group: d.group,
    index: d.index,
    attempt,
    template: d.template,
    key: d.key,
    intent: 'active',
    stage: 'new',
    vm: 'none',
    boot: { state: 'none', started: false },
    failures,
    cleanupTries: 0,
    ready: false,
  };
}

/** Apply one action from `reconcile`: a transition, or an effect recorded as pending (before dispatch). */
export function applyAction(s: FleetState, a: Action, desired: ReadonlyMap<string, DesiredSlot>, now: number, t: FleetTuning): FleetState {
  const rec = s.slots[a.slot];
  switch (a.kind) {
    case 'insert': {
      const d = desired.get(a.slot);
      if (!d || rec) return s;
      return withSlot(s, fresh(d, s.nextAttempt, 0), a.slot, { nextAttempt: s.nextAttempt + 1 });
    }
    case 'restart': {
      const d = desired.get(a.slot);
      if (!d || !rec) return s;
      const next = { ...fresh(d, s.nextAttempt, rec.failures), ...(rec.failedReason ? { failedReason: rec.failedReason } : {}) };
      return withSlot(s, next, a.slot, { nextAttempt: s.nextAttempt + 1 });
    }
    case 'reap':
      return withSlot(s, undefined, a.slot);
    case 'beginDelete': {
      if (!rec) return s;
      const r = a.why === 'k8s-failed' ? failed(rec, rec.k8sFailed ?? 'k3s failed') : rec;
      return withSlot(s, { ...r, intent: 'deleting', stage: r.stage === 'failed' ? 'failed' : 'deleting', ready: false }, a.slot);
    }
    case 'markDestroyed': {
      // Never while the attempt's child workflow may be open (the ladder never asks).
      if (!rec || childOpen(rec)) return s;
      const { retryAt: _r, restartAt: _s, ...rest } = rec;
      if (rec.budgetSpent) return withSlot(s, { ...rest, stage: 'destroyed', ready: false }, a.slot);
      const restartAt = rec.failures > 0 ? now + backoffMs(t, rec.failures, rec.slot, rec.attempt) : now;
      return withSlot(s, { ...rest, stage: 'destroyed', ready: false, restartAt }, a.slot);
    }
    default: {
      if (!rec || rec.attempt !== a.attempt || rec.pending) return s;
      const pending = { op: a.kind, seq: s.nextOpSeq, since: now };
      const { retryAt: _r, ...base } = rec;
      let next: SlotRecord = { ...base, pending };
      if (a.kind === 'startVm') next = { ...next, vm: 'launching', stage: 'launching' };
      if (a.kind === 'startBootstrap')
        next = { ...next, stage: 'bootstrapping', boot: { ...rec.boot, state: 'running', started: true, stage: 'verifying', startedAt: now } };
      return withSlot(s, next, a.slot, { nextOpSeq: s.nextOpSeq + 1 });
    }
  }
}
