/**
 * `--recover`: what a VM whose instance was lost does next.
 *
 * | the lost VM                                                     | next                                   |
 * |-----------------------------------------------------------------|----------------------------------------|
 * | a fleet's slot, `spot` in its spec, `preempted` with a `deadline` still ahead | the rows below from "a teardown" on (a slot under spot replaces itself as `--recover` does) |
 * | a fleet's slot otherwise (the fleet replaces lost slots itself) | `lost`, ends                           |
 * | no `recover` in its spec                                        | `lost`, ends (as without the flag)     |
 * | a teardown or cancel was asked before the relaunch              | `lost`, ends: the user wants it gone   |
 * | already relaunched `maxRecoveries` times                        | `lost`, ends (`gaveUp` says why)       |
 * | `--budget` spent, every run so far counted                      | `lost`, ends (`gaveUp` says why)       |
 * | `preempted` with a `deadline` still ahead (the instance runs)   | `replace`: launch at once under the same name, the old instance `retiring` beside it, count+1 |
 * | otherwise (a preemption without notice included)                | `relaunch`: tear down, launch again under the same name, count+1 |
 *
 * `replace` (the notice is the head start): the old instance is deleted when the replacement is
 * Ready or at the deadline, whichever comes first, so at most two instances of the name are
 * billed (the replacement launches with `--parallel` 1, `replacementSpec`); the preempted offer is
 * remembered by the capacity memory (its next plans try it last).
 *
 * | `spot` | preempted losses within `spotAutoWindowMs` (24 h), this one included | the next launch asks |
 * |--------|--------------------------------------------------------------------|----------------------|
 * | `auto` | at least `spotAutoPreemptions` (3)                                 | on-demand only (`onDemand`) |
 * | any    | fewer, or `spot` is `only` or absent                               | what the spec says   |
 *
 * The default bound, 5 (`Tuning.maxRecoveries`): a loss is rare (a preemption, a host failure);
 * a VM lost five times is likely lost for a reason a relaunch repeats (a spot market that reclaims
 * it at once, an image that crashes), and every relaunch bills a boot. The count never resets.
 * Three preemptions a day under `auto`: spot's discount no longer pays for the boots it costs.
 */
import type { RecoveryRecord, RetiringInstance, VmSpec } from './api';
import { lossMessage, type LossCause } from './loss';

export interface LossFacts {
  spec: Pick<VmSpec, 'recover' | 'budgetUsd' | 'spot'>;
  /** The record the run started with (absent before the first relaunch). */
  recovered?: RecoveryRecord | undefined;
  /** Started by a fleet (a slot). */
  fleetSlot: boolean;
  /** A teardown or cancel arrived after the VM was Ready. */
  stopAsked: boolean;
  /** USD spent by every run so far, this one included (src/core/spend.ts). */
  spentUsd: number;
  maxRecoveries: number;
  /** `spot: 'auto'` falls back to on-demand after this many preemptions within `spotAutoWindowMs`. */
  spotAutoPreemptions: number;
  spotAutoWindowMs: number;
  /** ISO: when the loss was seen (now, in the workflow). */
  lostAt: string;
  cause: LossCause;
}

export type LossDecision =
  /** Tear down, then relaunch with `record` (carried to the new run). */
  | { kind: 'relaunch'; record: RecoveryRecord }
  /** Relaunch at once with `record`; the old instance retires at `deadline` at the latest. */
  | { kind: 'replace'; record: RecoveryRecord; deadline: string }
  /** Stay `lost`; `record` is set when recovery was asked (the status shows why it stopped). */
  | { kind: 'stay'; record?: RecoveryRecord };

/** The recent preemptions, this loss included when it is one (at most `spotAutoPreemptions` kept). */
function preemptionsOf(f: LossFacts): string[] | undefined {
  const since = Date.parse(f.lostAt) - f.spotAutoWindowMs;
  const before = (f.recovered?.preemptions ?? []).filter((t) => Date.parse(t) > since);
  const all = f.cause.kind === 'preempted' ? [...before, f.lostAt] : before;
  return all.length > 0 ? all.slice(-Math.max(1, f.spotAutoPreemptions)) : undefined;
}

/** A preemption with its deadline still ahead: the notice is a head start. */
function noticeAhead(f: LossFacts): boolean {
  const { deadline } = f.cause;
  return f.cause.kind === 'preempted' && deadline !== undefined && Date.parse(deadline) > Date.parse(f.lostAt);
}

/** A fleet's spot slot replaces its preempted instance itself, before the deadline; any other lost slot is the fleet's to replace. */
const slotReplaces = (f: LossFacts): boolean => f.spec.spot !== undefined && noticeAhead(f);

/** The row of the table above that a loss takes (pure). */
export function decideAfterLoss(f: LossFacts): LossDecision {
  if (f.fleetSlot ? !slotReplaces(f) : !f.spec.recover) return { kind: 'stay' };
  const count = f.recovered?.count ?? 0;
  const preemptions = preemptionsOf(f);
  const base: RecoveryRecord = {
    count,
    lastLostAt: f.lostAt,
    lastReason: lossMessage(f.cause),
    lastCause: f.cause,
    spentUsd: f.spentUsd,
    ...(preemptions ? { preemptions } : {}),
  };
  if (f.stopAsked) return { kind: 'stay', record: { ...base, gaveUp: 'a teardown or cancel was asked' } };
  if (count >= f.maxRecoveries) return { kind: 'stay', record: { ...base, gaveUp: `relaunched ${count} times already (the bound is ${f.maxRecoveries})` } };
  if (f.spec.budgetUsd !== undefined && f.spentUsd >= f.spec.budgetUsd)
    return { kind: 'stay', record: { ...base, gaveUp: `the budget of $${f.spec.budgetUsd} is spent` } };
  const onDemand = f.spec.spot === 'auto' && (preemptions?.length ?? 0) >= f.spotAutoPreemptions;
  const record: RecoveryRecord = { ...base, count: count + 1, ...(onDemand ? { onDemand: true } : {}) };
  if (noticeAhead(f)) return { kind: 'replace', record, deadline: f.cause.deadline! };
  return { kind: 'relaunch', record };
}

/** The spec a launch asks with: a replacement launches one attempt at a time, and on-demand only when its record says so. */
export function replacementSpec<S extends Pick<VmSpec, 'spot' | 'parallel'>>(spec: S, o: { replacing: boolean; onDemand: boolean }): S {
  if (!o.replacing && !o.onDemand) return spec;
  const { spot: _spot, parallel: _parallel, ...rest } = spec;
  return {
    ...rest,
    ...(o.replacing || spec.parallel === undefined ? {} : { parallel: spec.parallel }),
    ...(o.onDemand || spec.spot === undefined ? {} : { spot: spec.spot }),
  } as S;
}

/** One line for people: `2 times; last lost 2026-…: reason`. */
export function recoveryLine(r: RecoveryRecord): string {
  const auto = r.onDemand ? ' — relaunched on-demand (spot preempted too often)' : '';
  return `${r.count} time${r.count === 1 ? '' : 's'}; last lost ${r.lastLostAt}: ${r.lastReason}${r.gaveUp ? ` — not relaunched: ${r.gaveUp}` : auto}`;
}

/** One line for people: the preempted instance a replacement runs beside. */
export function retiringLine(r: Pick<RetiringInstance, 'instanceIds' | 'location' | 'deadline' | 'goneAt'>): string {
  const what = `${r.instanceIds.join(', ') || '(by identity)'} at ${r.location.cloud}/${r.location.region} (preempted)`;
  return r.goneAt ? `${what}: deleted ${r.goneAt}` : `${what}: deleted when the replacement is Ready, at ${r.deadline} at the latest`;
}

/** Memo key under which a relaunched VM's workflow carries its record (read by `provision list`). */
export const RECOVERY_MEMO = 'gpuprovRecovered';
