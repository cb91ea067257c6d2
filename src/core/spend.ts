/**
 * Spend so far: price × billed time, per attempt, as a pure function of the VM's status.
 *
 * | attempt                          | billed from                 | billed until                                 |
 * |----------------------------------|-----------------------------|----------------------------------------------|
 * | no instance id (nothing created) | —                           | — (0 s: the cloud never handed one over)     |
 * | failed/cancelled, compensated    | its create (`createdAt`)    | its confirmed deletion (`endedAt`)           |
 * | failed, compensation running     | its create                  | now (still billed while leaked)              |
 * | the winner (`ready`)             | its create                  | the VM's `endedAt` once gone, else now       |
 * | a replacement's `retiring` instance (preempted) | `since` (the run before counted it until then) | its `goneAt`, else now |
 *
 * Histories from before `createdAt` existed fall back to the attempt's `startedAt` (marked
 * `estimated`). An offer without a price counts 0 USD and sets `unknownPrice`. The attempt in
 * flight (booting, connecting) enters the table when it ends: until then it is not counted.
 * A VM relaunched by `--recover` adds what its earlier runs spent (`recovered.spentUsd`).
 * A capacity block the VM bought adds its upfront price once, from its purchase (`reserved.block`;
 * a `--recover` relaunch finds the same purchase, already in `recovered.spentUsd`: `inSpend` false).
 */
import { offerKey } from './offers';
import type { AttemptRecord, RetiringInstance, VmStatus } from './api';

export interface AttemptSpend {
  index: number;
  offer: string;
  pricePerHour?: number;
  /** ISO times of the billed span; absent when nothing was created. */
  from?: string;
  until?: string;
  billedMs: number;
  usd: number;
  /** Still billed (the winner while up, a failed instance not yet deleted). */
  running: boolean;
  /** The create time was not recorded (older history): `startedAt` was used. */
  estimated: boolean;
}

export interface Spend {
  totalUsd: number;
  /** Part of `totalUsd` paid upfront for a capacity block this run bought. */
  upfrontUsd?: number;
  attempts: AttemptSpend[];
  /** Some billed attempt had no price: the total is a lower bound. */
  unknownPrice: boolean;
  /** USD per hour being billed now (for a budget's timer). */
  ratePerHour: number;
  /** Part of `totalUsd` spent by the runs before the last `--recover` relaunch (and its retiring instance since). */
  priorUsd?: number;
}

export type SpendInput = Pick<VmStatus, 'attempts' | 'endedAt'> & {
  recovered?: { spentUsd: number } | undefined;
  retiring?: Pick<RetiringInstance, 'offer' | 'since' | 'goneAt'> | undefined;
  reserved?: { block?: { upfrontPrice: number; inSpend?: boolean } } | undefined;
};

/** The upfront price of a block this run bought and counts (see the header). */
function upfrontOf(s: SpendInput): number {
  const b = s.reserved?.block;
  return b && b.inSpend !== false ? b.upfrontPrice : 0;
}

/** The retiring instance's bill in this run: USD, and whether it still runs (the overlap of a replacement counts). */
function retiringSpend(r: SpendInput['retiring'], nowMs: number): { usd: number; running: boolean; pricePerHour: number } {
  if (!r) return { usd: 0, running: false, pricePerHour: 0 };
  const untilMs = r.goneAt === undefined ? nowMs : Date.parse(r.goneAt);
  const pricePerHour = r.offer.pricePerHour ?? 0;
  return { usd: (pricePerHour * Math.max(0, untilMs - Date.parse(r.since))) / 3_600_000, running: r.goneAt === undefined, pricePerHour };
}

/** Round to a hundredth of a cent (display and JSON; the sum is taken before rounding). */
export const roundUsd = (usd: number): number => Math.round(usd * 10_000) / 10_000;

function attemptSpend(a: AttemptRecord, vmEndedAt: string | undefined, nowMs: number): AttemptSpend {
  const base = { index: a.index, offer: offerKey(a.offer), ...(a.offer.pricePerHour !== undefined ? { pricePerHour: a.offer.pricePerHour } : {}) };
  if (a.instanceIds.length === 0) return { ...base, billedMs: 0, usd: 0, running: false, estimated: false };
  const from = a.createdAt ?? a.startedAt;
  const end = a.outcome === 'ready' ? vmEndedAt : a.compensated ? a.endedAt : undefined;
  const untilMs = end === undefined ? nowMs : Date.parse(end);
  const billedMs = Math.max(0, untilMs - Date.parse(from));
  const usd = ((a.offer.pricePerHour ?? 0) * billedMs) / 3_600_000;
  return { ...base, from, until: new Date(untilMs).toISOString(), billedMs, usd, running: end === undefined, estimated: a.createdAt === undefined };
}

/** Spend of every attempt of `s` at `nowMs` (epoch ms; in a workflow, `Date.now()` is deterministic). */
export function spendSoFar(s: SpendInput, nowMs: number): Spend {
  const attempts = s.attempts.map((a) => attemptSpend(a, s.endedAt, nowMs));
  const old = retiringSpend(s.retiring, nowMs);
  const priorUsd = (s.recovered?.spentUsd ?? 0) + old.usd;
  const upfrontUsd = upfrontOf(s);
  const totalUsd = attempts.reduce((sum, a) => sum + a.usd, priorUsd + upfrontUsd);
  const unknownPrice = attempts.some((a) => a.billedMs > 0 && a.pricePerHour === undefined);
  const ratePerHour = attempts.filter((a) => a.running).reduce((sum, a) => sum + (a.pricePerHour ?? 0), old.running ? old.pricePerHour : 0);
  return {
    totalUsd: roundUsd(totalUsd),
    ...(upfrontUsd > 0 ? { upfrontUsd: roundUsd(upfrontUsd) } : {}),
    attempts: attempts.map((a) => ({ ...a, usd: roundUsd(a.usd) })),
    unknownPrice,
    ratePerHour,
    ...(priorUsd > 0 ? { priorUsd: roundUsd(priorUsd) } : {}),
  };
}

/** Budget points: `warnAtMs` (80 %) and `endAtMs` (100 %), projected at the current rate; undefined = never at this rate. */
export interface BudgetPlan {
  warnAtMs?: number;
  endAtMs?: number;
}

export const BUDGET_WARN_FRACTION = 0.8;

/**
 * When the spend reaches 80 % and 100 % of `budgetUsd`, projected from `nowMs` at the current
 * rate (the winner's price). A point already passed is `nowMs`.
 */
export function budgetPlan(s: SpendInput, budgetUsd: number, nowMs: number): BudgetPlan {
  const attempts = s.attempts.map((a) => attemptSpend(a, s.endedAt, nowMs));
  const old = retiringSpend(s.retiring, nowMs);
  const spent = attempts.reduce((sum, a) => sum + a.usd, (s.recovered?.spentUsd ?? 0) + old.usd + upfrontOf(s));
  const rate = attempts.filter((a) => a.running).reduce((sum, a) => sum + (a.pricePerHour ?? 0), old.running ? old.pricePerHour : 0);
  const at = (target: number): number | undefined => {
    if (spent >= target) return nowMs;
    if (rate <= 0) return undefined;
    return nowMs + Math.ceil(((target - spent) / rate) * 3_600_000);
  };
  const warnAtMs = at(budgetUsd * BUDGET_WARN_FRACTION);
  const endAtMs = at(budgetUsd);
  return { ...(warnAtMs !== undefined ? { warnAtMs } : {}), ...(endAtMs !== undefined ? { endAtMs } : {}) };
}
