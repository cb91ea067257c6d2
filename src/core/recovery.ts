/**
 * `--recover`: what a VM whose instance was lost does once what is left of it is torn down.
 *
 * | the lost VM                                                     | next                                   |
 * |-----------------------------------------------------------------|----------------------------------------|
 * | no `recover` in its spec                                        | `lost`, ends (as without the flag)     |
 * | a fleet's slot (the fleet replaces lost slots itself)           | `lost`, ends                           |
 * | a teardown or cancel was asked before the relaunch              | `lost`, ends: the user wants it gone   |
 * | already relaunched `maxRecoveries` times                        | `lost`, ends (`gaveUp` says why)       |
 * | `--budget` spent, every run so far counted                      | `lost`, ends (`gaveUp` says why)       |
 * | otherwise                                                       | relaunch under the same name, count+1  |
 *
 * The default bound, 5 (`Tuning.maxRecoveries`): a loss is rare (a preemption, a host failure);
 * a VM lost five times is likely lost for a reason a relaunch repeats (a spot market that reclaims
 * it at once, an image that crashes), and every relaunch bills a boot. The count never resets.
 */
import type { RecoveryRecord, VmSpec } from './api';
import { lossMessage, type LossCause } from './loss';

export interface LossFacts {
  spec: Pick<VmSpec, 'recover' | 'budgetUsd'>;
  /** The record the run started with (absent before the first relaunch). */
  recovered?: RecoveryRecord | undefined;
  /** Started by a fleet (a slot). */
  fleetSlot: boolean;
  /** A teardown or cancel arrived after the VM was Ready. */
  stopAsked: boolean;
  /** USD spent by every run so far, this one included (src/core/spend.ts). */
  spentUsd: number;
  maxRecoveries: number;
  lostAt: string;
  cause: LossCause;
}

export type LossDecision =
  /** Relaunch with `record` (carried to the new run). */
  | { kind: 'relaunch'; record: RecoveryRecord }
  /** Stay `lost`; `record` is set when recovery was asked (the status shows why it stopped). */
  | { kind: 'stay'; record?: RecoveryRecord };

/** The row of the table above that a loss takes (pure). */
export function decideAfterLoss(f: LossFacts): LossDecision {
  if (!f.spec.recover || f.fleetSlot) return { kind: 'stay' };
  const count = f.recovered?.count ?? 0;
  const base = { count, lastLostAt: f.lostAt, lastReason: lossMessage(f.cause), lastCause: f.cause, spentUsd: f.spentUsd };
  if (f.stopAsked) return { kind: 'stay', record: { ...base, gaveUp: 'a teardown or cancel was asked' } };
  if (count >= f.maxRecoveries) return { kind: 'stay', record: { ...base, gaveUp: `relaunched ${count} times already (the bound is ${f.maxRecoveries})` } };
  if (f.spec.budgetUsd !== undefined && f.spentUsd >= f.spec.budgetUsd)
    return { kind: 'stay', record: { ...base, gaveUp: `the budget of $${f.spec.budgetUsd} is spent` } };
  return { kind: 'relaunch', record: { ...base, count: count + 1 } };
}

/** One line for people: `2 times; last lost 2026-…: reason`. */
export function recoveryLine(r: RecoveryRecord): string {
  return `${r.count} time${r.count === 1 ? '' : 's'}; last lost ${r.lastLostAt}: ${r.lastReason}${r.gaveUp ? ` — not relaunched: ${r.gaveUp}` : ''}`;
}

/** Memo key under which a relaunched VM's workflow carries its record (read by `provision list`). */
export const RECOVERY_MEMO = 'gpuprovRecovered';
