/**
 * Reserved capacity in the launch (issue 31): when a launch into a window wakes, where a VM in a
 * window must end, when it is warned, what the status says while it waits, how a queued offer's
 * boot wait ends, and the one key a block's purchase is made under. Pure; the workflow glue is
 * src/workflows/reserved.ts.
 *
 * | situation                                   | decision                                                                   |
 * |---------------------------------------------|----------------------------------------------------------------------------|
 * | offer's reservation `start` ahead of now    | wait (durable sleep) until `start`, stage `waiting-window`, `waitingLine`  |
 * | `start` absent or passed                    | launch now                                                                 |
 * | window has an end (`leaveBy`, else `end`)   | TTL capped at leaveBy − `reservedTeardownMarginMs` (the teardown fits in the margin) |
 * | the user's TTL ends earlier                 | the user's TTL; no warning                                                 |
 * | capped                                      | warned `reservedWarnLeadMs` before the capped TTL (not before Ready)       |
 * | window already too short at Ready           | TTL = Ready (torn down at once), warned at Ready                           |
 * | `--queue`: the plan's order                  | every queued offer first (each in its order), then the ordinary ones       |
 * | queued offer (`Offer.queued`)               | boot wait = the ask's `waitMs` (not the cloud's boot timeout)              |
 * | queued offer's boot wait timed out          | Capacity for that offer (compensated; the ordinary search goes on)         |
 * | capacity block                              | bought once under `blockKey(workflowId, firstRunId)`: a retry, a replay or a `--recover` relaunch finds the same purchase; a later VM of the same name buys anew |
 * | block's upfront price above `--budget`      | refused before anything is bought (InvalidRequest)                         |
 */
import type { Capabilities, Offer } from './provider';
import type { ReservationInfo, ReservedAsk, ReservedState } from './reservation';

/** `--queue` without `--wait`: how long a queued request is waited on. */
export const DEFAULT_QUEUE_WAIT_MS = 2 * 60 * 60_000;

/** ISO → epoch ms, or undefined when absent or unreadable. */
function msOf(iso: string | undefined): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/** By when an instance in `r` must be gone: the cloud's `leaveBy`, else `end`; undefined when the reservation does not end. */
export function leaveByOf(r: Pick<ReservationInfo, 'end' | 'leaveBy'>): number | undefined {
  return msOf(r.leaveBy) ?? msOf(r.end);
}

/** When a launch into `offer` may start: its window's `start` when that is after `nowMs`, else undefined (now). */
export function wakeAt(offer: Pick<Offer, 'reservation'>, nowMs: number): number | undefined {
  const start = msOf(offer.reservation?.start);
  return start !== undefined && start > nowMs ? start : undefined;
}

/** What the status line says while the launch waits for `r`'s window. */
export function waitingLine(r: Pick<ReservationInfo, 'id' | 'kind'>, startMs: number): string {
  const what = r.kind === 'capacity-block' ? 'block' : 'reservation';
  return `waiting for ${what} ${r.id}, starts at ${new Date(startMs).toISOString()}`;
}

export interface LeavePlan {
  /** Epoch ms: the TTL (the VM's teardown starts then). */
  ttlAtMs: number;
  /** The window set the TTL (else the user's own TTL was earlier). */
  capped: boolean;
  /** Epoch ms of the warning (only when capped). */
  warnAtMs?: number;
  leaveByMs?: number;
}

/**
 * Where a VM Ready at `readyAtMs` in reservation `r` ends: its user TTL (`ttlMs`, optional) capped
 * at the window's `leaveBy` less the teardown margin, and the warning before. Undefined when
 * neither a TTL nor a window end applies.
 */
export function leavePlan(
  r: Pick<ReservationInfo, 'end' | 'leaveBy'> | undefined,
  ttlMs: number | undefined,
  readyAtMs: number,
  t: { reservedTeardownMarginMs: number; reservedWarnLeadMs: number },
): LeavePlan | undefined {
  const userAt = ttlMs === undefined ? undefined : readyAtMs + ttlMs;
  const leaveByMs = r ? leaveByOf(r) : undefined;
  if (leaveByMs === undefined) return userAt === undefined ? undefined : { ttlAtMs: userAt, capped: false };
  const windowAt = Math.max(readyAtMs, leaveByMs - t.reservedTeardownMarginMs);
  if (userAt !== undefined && userAt <= windowAt) return { ttlAtMs: userAt, capped: false, leaveByMs };
  return { ttlAtMs: windowAt, capped: true, warnAtMs: Math.max(readyAtMs, windowAt - t.reservedWarnLeadMs), leaveByMs };
}

/** The warning's line (log, status, explain). */
export function leaveLine(r: Pick<ReservationInfo, 'id' | 'kind'>, leaveByMs: number, ttlAtMs: number): string {
  const what = r.kind === 'capacity-block' ? 'capacity block' : 'reservation';
  return `the ${what} ${r.id} ends at ${new Date(leaveByMs).toISOString()}: the VM is torn down at ${new Date(ttlAtMs).toISOString()}`;
}

/** The reservation the status records for a Ready VM's offer, with its teardown plan; undefined when the offer is in none. */
export function leaveState(offer: Offer, ttlMs: number | undefined, readyAtMs: number, t: Parameters<typeof leavePlan>[3]): ReservedState['leave'] {
  const r = offer.reservation;
  if (!r) return undefined;
  const p = leavePlan(r, ttlMs, readyAtMs, t);
  if (!p?.capped || p.leaveByMs === undefined) return undefined;
  const iso = (ms: number) => new Date(ms).toISOString();
  return { leaveBy: iso(p.leaveByMs), ttlAt: iso(p.ttlAtMs), warnAt: iso(p.warnAtMs ?? p.ttlAtMs), line: leaveLine(r, p.leaveByMs, p.ttlAtMs) };
}

/** The boot wait of an offer: a queued one waits up to the ask's `waitMs` for the cloud to serve it. */
export function bootCapsOf<C extends Pick<Capabilities, 'bootTimeoutMs'>>(caps: C, offer: Pick<Offer, 'queued'>, ask: ReservedAsk | undefined): C {
  if (!offer.queued) return caps;
  const waitMs = ask?.kind === 'queue' ? ask.waitMs : DEFAULT_QUEUE_WAIT_MS;
  return { ...caps, bootTimeoutMs: waitMs };
}

/** A queued offer whose boot wait timed out is out of capacity (for that offer); other ends keep their kind. */
export function queuedEnd(offer: Pick<Offer, 'queued'>, phase: string, type: string, waitMs: number): { type: 'Capacity'; message: string } | undefined {
  if (!offer.queued || phase !== 'boot' || type !== 'Timeout') return undefined;
  const within = waitMs < 60_000 ? `${Math.round(waitMs / 1000)} s` : `${Math.round(waitMs / 60_000)} min`;
  return { type: 'Capacity', message: `the queued request was not served within ${within} (--wait)` };
}

/** The idempotency key of a VM's block purchase: stable across retries, replays and continue-as-new of one VM's life. */
export function blockKey(workflowId: string, firstRunId: string): string {
  return `gpuprov-block:${workflowId}:${firstRunId}`;
}

/** A block whose upfront price exceeds the budget: the reason (nothing is bought), else undefined. */
export function upfrontProblem(upfrontPrice: number, budgetUsd: number | undefined): string | undefined {
  if (budgetUsd === undefined || upfrontPrice <= budgetUsd) return undefined;
  return `the capacity block costs $${upfrontPrice} upfront, more than --budget $${budgetUsd}: nothing was bought`;
}

/** The ask the plan gets: after a block's purchase, the bought block's reservation; else the spec's own ask. */
export function planAskOf(ask: ReservedAsk | undefined, boughtId: string | undefined): ReservedAsk | undefined {
  if (ask?.kind === 'capacity-block') return boughtId === undefined ? ask : { kind: 'reservation', id: boughtId };
  return ask;
}

/** Under a queue ask, queued offers before the ordinary ones (the queue is tried first; its timeout fails over to the ordinary search). */
export function queuedFirst<O extends Pick<Offer, 'queued'>>(offers: readonly O[], ask: ReservedAsk | undefined): O[] {
  if (ask?.kind !== 'queue') return [...offers];
  return [...offers.filter((o) => o.queued), ...offers.filter((o) => !o.queued)];
}

/** What the status, `list`, the Web UI and `explain` say about a VM's reserved capacity, one line each. */
export function reservedLines(r: ReservedState | undefined, stage?: string): string[] {
  if (!r) return [];
  const lines: string[] = [];
  if (r.block)
    lines.push(
      `capacity block ${r.block.offeringId} bought ${r.block.boughtAt} for $${r.block.upfrontPrice} upfront${r.block.inSpend === false ? ' (counted by an earlier run)' : ''}`,
    );
  if (r.reservation) {
    const win = r.reservation.start || r.reservation.end ? `, window ${r.reservation.start ?? 'now'} to ${r.reservation.end ?? 'open'}` : '';
    lines.push(`${r.reservation.kind} ${r.reservation.id} at ${r.reservation.cloud}/${r.reservation.region}${win}`);
  }
  if (r.wait) lines.push(stage === 'waiting-window' ? r.wait.line : `waited for the window from ${r.wait.since} until ${r.wait.waitedUntil ?? r.wait.until}`);
  if (r.leave) lines.push(r.leave.warnedAt ? `WARNING (${r.leave.warnedAt}): ${r.leave.line}` : r.leave.line);
  return lines;
}
