/**
 * The fleet's observed state and the two pure ways it changes: `applyAction` (a transition, or
 * an effect recorded as pending before it is dispatched) and `fold` (an observation). Only the
 * driver (fleetWorkflow) calls them; events of a superseded attempt are discarded here.
 *
 * A slot's child vmWorkflow is tracked apart from its instance: a child that reported its end
 * (`vm: 'ended'`) may still be open, and the slot is destroyed only once the child is `gone`
 * (closed). Until then no replacement starts: never two children of one slot at once.
 */
import type { SshEndpoint } from '../provider';
import { backoffMs, type FleetTuning } from './backoff';
import type { DesiredSlot, SlotTemplate } from './types';

/** Display ladder of a slot; the decisions branch on the facts below, not on this label. */
export type SlotStage = 'new' | 'launching' | 'bootstrapping' | 'ready' | 'k8s-failed' | 'failed' | 'deleting' | 'destroyed';

/** Effects the driver dispatches; one at a time per slot. */
export type EffectKind = 'startVm' | 'startBootstrap' | 'stopBootstrap' | 'teardownVm';

/** Compact bootstrap facts (never log bodies). */
export interface BootFacts {
  state: 'none' | 'running' | 'ready' | 'failed' | 'stopped';
  /** The start command may be running on the node (set when the start is dispatched: an ambiguous start counts). */
  started: boolean;
  /** Finer stage: verifying, starting, waiting-ready, ready, or the failure stage. */
  stage?: string;
  lastStdoutSeq?: number;
  lastStderrSeq?: number;
  startedAt?: number;
  readyAt?: number;
  observedAt?: number;
}

export interface SlotRecord {
  slot: string;
  group: string;
  index: number;
  /** Fleet-wide, never reused: names this incarnation of the slot. */
  attempt: number;
  template: SlotTemplate;
  key: string;
  intent: 'active' | 'deleting';
  stage: SlotStage;
  /**
   * The attempt's child workflow and its VM: `none` (not dispatched); `launching` (dispatched,
   * maybe started); `up` (reachable, also when its k3s step failed); `ended` (the child reported
   * a terminal stage: nothing of it is billed, but the workflow may still be open); `gone` (the
   * child workflow is closed: its completion was observed, or a signal to it failed).
   */
  vm: 'none' | 'launching' | 'up' | 'ended' | 'gone';
  /** The VM ended its k3s step `k8s-failed` (still up): the reason. */
  k8sFailed?: string;
  /** This run awaits the child's completion (it started the child; a continued-as-new run does not). */
  resultAwaited?: boolean;
  endpoint?: SshEndpoint;
  hostKey?: string;
  /** `SHA256:…` of the worker key the VM was created with. */
  workerKeyFingerprint?: string;
  boot: BootFacts;
  pending?: { op: EffectKind; seq: number; since: number };
  /** Consecutive failed attempts; reset when an attempt becomes ready, carried into replacements. */
  failures: number;
  /** Failed cleanup effects in a row (their retry backoff). */
  cleanupTries: number;
  retryAt?: number;
  restartAt?: number;
  failedReason?: string;
  /**
   * The attempt was torn down because its spend reached the group's `budgetUsd`: the slot is not
   * replaced (a replacement would spend the budget again, in a loop) until its template changes.
   */
  budgetSpent?: boolean;
  ready: boolean;
}

export interface FleetState {
  name: string;
  /** The generation the driver last evaluated (not a readiness claim). */
  observedGeneration: number;
  nextAttempt: number;
  nextOpSeq: number;
  slots: Record<string, SlotRecord>;
}

export type VmEnd = 'failed' | 'lost' | 'terminated' | 'cancelled' | 'gone';

/**
 * Observations, each of one attempt (`slot` + `attempt`, from the child's attempt-scoped ID or
 * the effect that produced it). `vmEnded.closed`: the child workflow is known closed (its result,
 * or a failed signal), not only reported its end.
 */
export type FleetEvent =
  | { type: 'vmStarted'; slot: string; attempt: number }
  | { type: 'vmReady'; slot: string; attempt: number; endpoint: SshEndpoint; hostKey?: string; workerKeyFingerprint?: string }
  | { type: 'vmK8sFailed'; slot: string; attempt: number; reason: string; endpoint?: SshEndpoint; hostKey?: string; workerKeyFingerprint?: string }
  | { type: 'vmEnded'; slot: string; attempt: number; outcome: VmEnd; reason?: string; closed: boolean; budgetReached?: boolean }
  | { type: 'teardownSent'; slot: string; attempt: number }
  | { type: 'bootObserved'; slot: string; attempt: number; stage: string; lastStdoutSeq?: number; lastStderrSeq?: number; startedAt?: number }
  | { type: 'bootDone'; slot: string; attempt: number; ok: boolean; stage: string; reason?: string; lastStdoutSeq?: number; lastStderrSeq?: number }
  | { type: 'bootStopped'; slot: string; attempt: number }
  | { type: 'opFailed'; slot: string; attempt: number; op: EffectKind; reason: string };

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

function withSlot(s: FleetState, rec: SlotRecord | undefined, slot: string, extra: Partial<FleetState> = {}): FleetState {
  const slots = { ...s.slots };
  if (rec) slots[slot] = rec;
  else delete slots[slot];
  return { ...s, ...extra, slots };
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

function clearPending(r: SlotRecord, ops: EffectKind[]): SlotRecord {
  if (!r.pending || !ops.includes(r.pending.op)) return r;
  const { pending: _p, ...rest } = r;
  return rest;
}

/** The attempt failed while it was meant to be active (counted once; deleting slots do not count failures). */
function failed(r: SlotRecord, reason: string): SlotRecord {
  if (r.intent !== 'active' || r.stage === 'failed') return r;
  return { ...r, stage: 'failed', ready: false, failures: r.failures + 1, failedReason: reason };
}

/** Fold one observation. Events of a missing slot or another attempt are discarded unchanged. */
export function fold(s: FleetState, e: FleetEvent, now: number, t: FleetTuning): FleetState {
  const rec = s.slots[e.slot];
  if (!rec || rec.attempt !== e.attempt) return s;
  let r = rec;
  switch (e.type) {
    case 'vmStarted':
      r = { ...clearPending(r, ['startVm']), resultAwaited: true };
      break;
    case 'vmReady': {
      if (r.vm !== 'launching') return s;
      r = {
        ...clearPending(r, ['startVm']),
        vm: 'up',
        endpoint: e.endpoint,
        ...(e.hostKey ? { hostKey: e.hostKey } : {}),
        ...(e.workerKeyFingerprint ? { workerKeyFingerprint: e.workerKeyFingerprint } : {}),
      };
      if (r.intent === 'active' && !r.template.bootstrap) r = { ...r, ready: true, stage: 'ready', failures: 0, cleanupTries: 0 };
      break;
    }
    case 'vmK8sFailed':
      if (r.vm !== 'launching' && r.vm !== 'up') return s;
      r = {
        ...clearPending(r, ['startVm']),
        vm: 'up',
        ready: false,
        k8sFailed: e.reason,
        failedReason: e.reason,
        ...(e.endpoint ? { endpoint: e.endpoint } : {}),
        ...(e.hostKey ? { hostKey: e.hostKey } : {}),
        ...(e.workerKeyFingerprint ? { workerKeyFingerprint: e.workerKeyFingerprint } : {}),
      };
      if (r.intent === 'active' && r.stage !== 'failed') r = { ...r, stage: 'k8s-failed' };
      break;
    case 'teardownSent': {
      // Delivered to a child that already reported its end: it is still closing. Probe again later.
      if (r.pending?.op !== 'teardownVm' || r.vm !== 'ended') return s;
      const tries = r.cleanupTries + 1;
      r = { ...clearPending(r, ['teardownVm']), cleanupTries: tries, retryAt: now + backoffMs(t, tries, r.slot, r.attempt) };
      break;
    }
    case 'vmEnded':
      if (r.vm === 'gone' || r.vm === 'none' || (r.vm === 'ended' && !e.closed)) return s;
      r = clearPending({ ...r, vm: e.closed ? 'gone' : 'ended', ready: false, ...(e.budgetReached && r.intent === 'active' ? { budgetSpent: true } : {}) }, [
        'startVm',
        'teardownVm',
      ]);
      r = failed(r, `VM ${e.outcome}${e.reason ? `: ${e.reason}` : ''}`);
      if (r.intent === 'deleting' && r.stage !== 'failed') r = { ...r, stage: 'deleting' };
      break;
    case 'bootObserved':
      if (r.boot.state !== 'running') return s;
      r = { ...r, boot: { ...r.boot, stage: e.stage, observedAt: now, ...seqs(e), ...(e.startedAt !== undefined ? { startedAt: e.startedAt } : {}) } };
      break;
    case 'bootDone':
      if (r.pending?.op !== 'startBootstrap') return s;
      r = clearPending(r, ['startBootstrap']);
      if (e.ok && r.intent === 'active') {
        r = {
          ...r,
          ready: true,
          stage: 'ready',
          failures: 0,
          cleanupTries: 0,
          boot: { ...r.boot, state: 'ready', stage: e.stage, readyAt: now, observedAt: now, ...seqs(e) },
        };
      } else {
        r = { ...r, boot: { ...r.boot, state: e.ok ? 'ready' : 'failed', stage: e.stage, observedAt: now, ...seqs(e) } };
        if (!e.ok) r = failed(r, `bootstrap ${e.stage}${e.reason ? `: ${e.reason}` : ''}`);
      }
      break;
    case 'bootStopped':
      if (r.pending?.op !== 'stopBootstrap') return s;
      r = { ...clearPending(r, ['stopBootstrap']), cleanupTries: 0, boot: { ...r.boot, state: 'stopped', started: false, observedAt: now } };
      break;
    case 'opFailed': {
      if (r.pending?.op !== e.op) return s;
      r = clearPending(r, [e.op]);
      if (e.op === 'startVm' || e.op === 'startBootstrap') {
        // The effect may have happened anyway: vm stays `launching` / boot `started`, so cleanup covers it.
        if (e.op === 'startBootstrap') r = { ...r, boot: { ...r.boot, state: 'failed', stage: 'start-failed', observedAt: now } };
        r = failed(r, `${e.op}: ${e.reason}`);
      } else {
        const tries = r.cleanupTries + 1;
        r = { ...r, cleanupTries: tries, retryAt: now + backoffMs(t, tries, r.slot, r.attempt), failedReason: `${e.op}: ${e.reason}` };
      }
      break;
    }
  }
  return withSlot(s, r, e.slot);
}

function seqs(e: { lastStdoutSeq?: number; lastStderrSeq?: number }): Partial<BootFacts> {
  return {
    ...(e.lastStdoutSeq !== undefined ? { lastStdoutSeq: e.lastStdoutSeq } : {}),
    ...(e.lastStderrSeq !== undefined ? { lastStderrSeq: e.lastStderrSeq } : {}),
  };
}
