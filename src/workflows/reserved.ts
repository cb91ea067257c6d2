/**
 * Reserved capacity in the launch (issue 31), glue over src/core/reserved-window.ts: the capacity
 * block's purchase before the plan (found again by its query, checked against `--budget`, bought
 * by one idempotent activity), the durable wait for a reservation's window before its attempt,
 * and the warning before a window's end in the Ready wait. Every step here runs only when the
 * spec asks for reserved capacity (or the offer is in a reservation), so launches without it
 * issue the commands they always did.
 */
import { sleep, workflowInfo } from '@temporalio/workflow';
import { failedLaunch, type LaunchOutcome } from '../core/attempt';
import type { Offer } from '../core/provider';
import type { ReservedState } from '../core/reservation';
import { blockKey, upfrontProblem, waitingLine, wakeAt } from '../core/reserved-window';
import { kindOfFailureType } from '../core/search';
import type { VmContext } from './context';
import { failureInfo } from './failure-info';
import { mutating, reading } from './proxies';
import { vmLog } from './telemetry';

const iso = (ms: number): string => new Date(ms).toISOString();

function noteReserved(ctx: VmContext, patch: Partial<ReservedState>): void {
  ctx.setStage(ctx.status.stage, { reserved: { ...ctx.status.reserved, ...patch } });
}

/**
 * `--capacity-block OFFERING --yes`: find the offering again (its query travels in the ask), refuse
 * it above `--budget`, buy it once. Nothing to do for other asks, or when this run holds the block.
 * The launch's end when it cannot go on (gone: Capacity; too dear: InvalidRequest; cancelled).
 */
export async function buyAskedBlock(ctx: VmContext): Promise<LaunchOutcome | undefined> {
  const spec = ctx.launchSpec();
  const ask = spec.reserved;
  if (ask?.kind !== 'capacity-block' || ctx.status.reserved?.block) return undefined;
  const attempts = ctx.status.attempts;
  try {
    ctx.setStage('planning');
    const found = await ctx.interruptibly(() =>
      reading(ctx.tuning, `find capacity block ${ask.offeringId}`).blockOfferings({
        query: ask.query ?? { count: 1, durationHours: 24 },
        offeringId: ask.offeringId,
        ...(spec.clouds ? { clouds: spec.clouds } : {}),
      }),
    );
    const offering = found.offerings[0]!;
    const tooDear = upfrontProblem(offering.upfrontPrice, spec.budgetUsd);
    if (tooDear) return failedLaunch('no-offers', 'InvalidRequest', tooDear, attempts);
    if (ctx.cancelRequested) return { kind: 'cancelled', attempts };
    const info = workflowInfo();
    const bought = await mutating(ctx.tuning, `buy capacity block ${offering.offeringId} ($${offering.upfrontPrice} upfront)`, offering.cloud).buyCapacityBlock(
      {
        offering,
        idempotencyKey: blockKey(info.workflowId, info.firstExecutionRunId),
      },
    );
    noteReserved(ctx, {
      reservation: { ...bought, cloud: offering.cloud, region: offering.region },
      block: {
        offeringId: offering.offeringId,
        upfrontPrice: offering.upfrontPrice,
        currency: offering.currency,
        boughtAt: iso(Date.now()),
        // A --recover relaunch finds the same purchase: its price is already in `recovered.spentUsd`.
        ...(ctx.status.recovered ? { inSpend: false } : {}),
      },
    });
    vmLog(ctx.status, 'info', `capacity block ${offering.offeringId} bought as ${bought.id} for $${offering.upfrontPrice} upfront`, {
      offering: offering.offeringId,
      reservation: bought.id,
    });
    return undefined;
  } catch (err) {
    const f = failureInfo(err);
    if (f.cancelled) return { kind: 'cancelled', attempts };
    return failedLaunch('no-offers', kindOfFailureType(f.type), f.message, attempts);
  }
}

/**
 * Before an attempt at `offer`: record its reservation, and when its window opens later wait for
 * it durably (a workflow timer: worker and server restarts change nothing; a cancel or `down`
 * interrupts it). `go` or `cancelled`.
 */
export async function enterWindow(ctx: VmContext, offer: Offer): Promise<'go' | 'cancelled'> {
  const r = offer.reservation;
  if (!r) return 'go';
  noteReserved(ctx, { reservation: { ...r, cloud: offer.cloud, region: offer.region } });
  const at = wakeAt(offer, Date.now());
  if (at === undefined) return 'go';
  const line = waitingLine(r, at);
  ctx.setOffer(offer);
  ctx.setStage('waiting-window', { reserved: { ...ctx.status.reserved, wait: { since: iso(Date.now()), until: iso(at), line } } });
  vmLog(ctx.status, 'info', line, { reservation: r.id, startsAt: iso(at) });
  try {
    // Hazard: a server timer may fire a little before its time (seen after a dev server restart); never go on before `at`.
    await ctx.interruptibly(async () => {
      while (Date.now() < at) await sleep(at - Date.now(), { summary: line });
    });
  } catch (err) {
    if (failureInfo(err).cancelled) return 'cancelled';
    throw err;
  }
  const wait = ctx.status.reserved?.wait;
  if (wait) noteReserved(ctx, { wait: { ...wait, waitedUntil: iso(Date.now()) } });
  return ctx.cancelRequested ? 'cancelled' : 'go';
}

/** Epoch ms of the window's warning still to give in the Ready wait, or undefined. */
export function leaveWarningAt(ctx: VmContext): number | undefined {
  const leave = ctx.status.reserved?.leave;
  return leave && !leave.warnedAt ? Date.parse(leave.warnAt) : undefined;
}

/** Give the window's warning once its time came (log, status, Web UI); true when it was given now. */
export function warnLeave(ctx: VmContext): boolean {
  const leave = ctx.status.reserved?.leave;
  const at = leaveWarningAt(ctx);
  if (!leave || at === undefined || Date.now() < at) return false;
  vmLog(ctx.status, 'warn', leave.line, { leaveBy: leave.leaveBy, ttlAt: leave.ttlAt });
  noteReserved(ctx, { leave: { ...leave, warnedAt: iso(Date.now()) } });
  return true;
}
