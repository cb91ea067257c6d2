/**
 * The fleet state's shape (`FleetState`, one `SlotRecord` per slot), the observations folded
 * into it (`FleetEvent`), and the record updates both ./state.ts's `applyAction` and ./fold.ts
 * share. Import these through ./state.ts.
 */
import type { SshEndpoint } from '../provider';
import type { SlotTemplate } from './types';

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

/** The state with `slot` set to `rec` (or removed when undefined), plus `extra`. */
export function withSlot(s: FleetState, rec: SlotRecord | undefined, slot: string, extra: Partial<FleetState> = {}): FleetState {
  const slots = { ...s.slots };
  if (rec) slots[slot] = rec;
  else delete slots[slot];
  return { ...s, ...extra, slots };
}

/** The record without its pending effect, if that effect is one of `ops`. */
export function clearPending(r: SlotRecord, ops: EffectKind[]): SlotRecord {
  if (!r.pending || !ops.includes(r.pending.op)) return r;
  const { pending: _p, ...rest } = r;
  return rest;
}

/** The attempt failed while it was meant to be active (counted once; deleting slots do not count failures). */
export function failed(r: SlotRecord, reason: string): SlotRecord {
  if (r.intent !== 'active' || r.stage === 'failed') return r;
  return { ...r, stage: 'failed', ready: false, failures: r.failures + 1, failedReason: reason };
}
