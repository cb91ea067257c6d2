/**
 * The pure decider: `(observed, desired, now) → at most one action per slot`, by the ladder
 * below (first matching row wins). No I/O, no clock, no randomness: `now` is an input and every
 * deadline it compares with was stored when an observation was folded.
 *
 * | row | condition                                                    | action            |
 * |-----|--------------------------------------------------------------|-------------------|
 * |  0  | desired slot without a record                                | insert            |
 * |  1  | destroyed, slot undesired                                    | reap              |
 * |  2  | destroyed, desired, restartAt due                            | restart (latest spec, failures carried) |
 * |  3  | destroyed, restart not due, or its budget was spent and the  | wait until restartAt |
 * |     | template is unchanged (held: no replacement loop)            | (held: no wake)   |
 * |  4  | active and (undesired, failed, k3s failed and the group's    | beginDelete       |
 * |     | onK8sFailure is not `keep`, or spec drift*)                  |                   |
 * |  5  | an effect is pending                                         | wait for its result |
 * |  6  | a failed cleanup effect's retryAt not due                    | wait until retryAt |
 * |  7  | deleting, bootstrap may run on a reachable VM                | stopBootstrap     |
 * |  8  | deleting, child open: VM launching or up, or ended** with    | teardownVm        |
 * |     | no completion awaited by this run                            |                   |
 * |  9  | deleting, child ended**, its completion awaited              | wait for it       |
 * | 10  | deleting, child closed (or never started)                    | markDestroyed     |
 * | 11  | ready                                                        | none (steady)     |
 * | 12  | k3s failed, kept (onK8sFailure: keep)                        | none (up for inspection, not ready) |
 * | 13  | no VM yet                                                    | startVm           |
 * | 14  | VM up, bootstrap wanted and not started                      | startBootstrap    |
 * | 15  | otherwise (VM launching / bootstrap running)                 | none (await events) |
 *
 * *Drift replaces one slot of a group at a time: only when every other desired slot of that
 * group is ready, and only the lowest drifted index per pass (a rolling replacement).
 *
 * **A child that reported its end may still be open. After continue-as-new no run awaits its
 * completion, so the teardown signal doubles as a probe: it fails once the child has closed
 * (`vmEnded`, closed), and while it is delivered the slot retries on the cleanup backoff. So a
 * slot is destroyed, and its replacement started, only after its child workflow has closed.
 */
import type { Action, FleetState, SlotRecord } from './state';
import type { DesiredSlot } from './types';

export interface SlotDecision {
  slot: string;
  row: number;
  action?: Action;
  /** When this slot next needs a pass by itself (a stored deadline). */
  wakeAt?: number;
}

export interface SlotContext {
  /** Another desired slot of this group is not ready, or a drift replacement already started this pass. */
  groupBusy: boolean;
}

/** The ladder for one slot. */
export function decideSlot(rec: SlotRecord | undefined, want: DesiredSlot | undefined, now: number, ctx: SlotContext = { groupBusy: false }): SlotDecision {
  if (!rec) return want ? { slot: want.slot, row: 0, action: { kind: 'insert', slot: want.slot } } : { slot: '', row: -1 };
  const slot = rec.slot;
  if (rec.stage === 'destroyed') {
    if (!want) return { slot, row: 1, action: { kind: 'reap', slot } };
    if (rec.budgetSpent && rec.key === want.key) return { slot, row: 3 };
    if (now >= (rec.restartAt ?? 0)) return { slot, row: 2, action: { kind: 'restart', slot } };
    return { slot, row: 3, ...(rec.restartAt !== undefined ? { wakeAt: rec.restartAt } : {}) };
  }
  if (rec.intent === 'active') {
    if (!want) return { slot, row: 4, action: { kind: 'beginDelete', slot, why: 'undesired' } };
    if (rec.stage === 'failed') return { slot, row: 4, action: { kind: 'beginDelete', slot, why: 'failed' } };
    if (rec.k8sFailed !== undefined && want.onK8sFailure !== 'keep') return { slot, row: 4, action: { kind: 'beginDelete', slot, why: 'k8s-failed' } };
    if (rec.key !== want.key && !ctx.groupBusy) return { slot, row: 4, action: { kind: 'beginDelete', slot, why: 'drift' } };
  }
  if (rec.pending) return { slot, row: 5 };
  if (rec.retryAt !== undefined && now < rec.retryAt) return { slot, row: 6, wakeAt: rec.retryAt };
  const a = rec.attempt;
  if (rec.intent === 'deleting') {
    if (rec.boot.started && rec.vm === 'up') return { slot, row: 7, action: { kind: 'stopBootstrap', slot, attempt: a } };
    if (rec.vm === 'launching' || rec.vm === 'up' || (rec.vm === 'ended' && !rec.resultAwaited))
      return { slot, row: 8, action: { kind: 'teardownVm', slot, attempt: a } };
    if (rec.vm === 'ended') return { slot, row: 9 };
    return { slot, row: 10, action: { kind: 'markDestroyed', slot } };
  }
  if (rec.ready) return { slot, row: 11 };
  if (rec.k8sFailed !== undefined) return { slot, row: 12 };
  if (rec.vm === 'none') return { slot, row: 13, action: { kind: 'startVm', slot, attempt: a } };
  if (rec.vm === 'up' && rec.template.bootstrap && rec.boot.state === 'none') return { slot, row: 14, action: { kind: 'startBootstrap', slot, attempt: a } };
  return { slot, row: 15 };
}

/** Ready, active, nothing in flight: counts as available for a rolling replacement. */
const available = (r: SlotRecord | undefined): boolean => r !== undefined && r.ready && r.intent === 'active' && !r.pending;

export interface Pass {
  decisions: SlotDecision[];
  actions: Action[];
  /** Earliest stored deadline among waiting slots. */
  wakeAt?: number;
}

/** One pass over every slot, observed or desired, in a stable order (group, then index). */
export function reconcile(s: FleetState, desired: ReadonlyMap<string, DesiredSlot>, now: number): Pass {
  const names = [...new Set([...Object.keys(s.slots), ...desired.keys()])];
  const info = (n: string): { group: string; index: number } => s.slots[n] ?? desired.get(n) ?? { group: '', index: 0 };
  names.sort((x, y) => {
    const a = info(x);
    const b = info(y);
    return a.group < b.group ? -1 : a.group > b.group ? 1 : a.index - b.index || (x < y ? -1 : x > y ? 1 : 0);
  });
  const unavailable = new Map<string, number>();
  for (const d of desired.values()) if (!available(s.slots[d.slot])) unavailable.set(d.group, (unavailable.get(d.group) ?? 0) + 1);
  const driftStarted = new Set<string>();
  const decisions: SlotDecision[] = [];
  const actions: Action[] = [];
  let wakeAt: number | undefined;
  for (const n of names) {
    const rec = s.slots[n];
    const want = desired.get(n);
    const group = rec?.group ?? want?.group ?? '';
    // A drifted slot may go only when all *other* desired slots of its group are available.
    const others = (unavailable.get(group) ?? 0) - (want && !available(rec) ? 1 : 0);
    const d = decideSlot(rec, want, now, { groupBusy: others > 0 || driftStarted.has(group) });
    if (d.action?.kind === 'beginDelete' && d.action.why === 'drift') driftStarted.add(group);
    decisions.push(d);
    if (d.action) actions.push(d.action);
    if (d.wakeAt !== undefined) wakeAt = wakeAt === undefined ? d.wakeAt : Math.min(wakeAt, d.wakeAt);
  }
  return { decisions, actions, ...(wakeAt !== undefined ? { wakeAt } : {}) };
}

/**
 * Converged for the desired shape: every desired slot holds the exact desired spec, ready,
 * active, with nothing pending; no other slot remains.
 */
export function isConverged(s: FleetState, desired: ReadonlyMap<string, DesiredSlot>): boolean {
  for (const d of desired.values()) {
    const r = s.slots[d.slot];
    if (!r || r.key !== d.key || !available(r)) return false;
  }
  return Object.keys(s.slots).every((n) => desired.has(n));
}
