/**
 * The failover search: plan → for each unblocked offer one attempt (src/workflows/attempt.ts),
 * compensating every attempt that may have created something before moving on. With
 * `--parallel N` (N > 1) the hedged search of hedged-launch.ts instead. Decisions live in
 * src/core/search.ts and src/core/attempt.ts; this file is the glue that runs them.
 */
import { ApplicationFailure, setHandler, CancellationScope } from '@temporalio/workflow';
import { cancelSignal, statusQuery, type LaunchFailureDetails, type LaunchResult, type VmSpec } from '../core/api';
import { alreadyReleased, attemptRecord, exhaustedLaunch, failedLaunch, type LaunchOutcome } from '../core/attempt';
import { isFatal } from '../core/errors';
import { FAILURE_TYPES } from '../core/failures';
import { parallelOf } from '../core/hedge';
import type { Capabilities } from '../core/provider';
import { afterFailure, newSearch, nextOffer, replan, type SearchState } from '../core/search';
import type { Tuning } from '../core/tuning';
import { capsFor, compensate, failedAttempt, runAttempt, waitAndReplan } from './attempt';
import { VmContext } from './context';
import { runHedged } from './hedged-launch';
import { firstPlan, planFor } from './plan';
import { buyAskedBlock, enterWindow } from './reserved';
import { bootCapsOf, queuedEnd } from '../core/reserved-window';
import { countLaunch, recordReady } from './telemetry';

export type { LaunchOutcome } from '../core/attempt';

/** Run the failover search in `ctx` until ready, cancelled, or failed. Never throws for cloud errors. */
export async function runLaunch(ctx: VmContext): Promise<LaunchOutcome> {
  const reserved = ctx.launchSpec().reserved;
  if (reserved) {
    const ended = await buyAskedBlock(ctx);
    if (ended) return ended;
  }
  const plan = planFor(ctx);
  const first = await firstPlan(ctx, plan);
  if ('outcome' in first) return first.outcome;
  let planned = first.planned;
  const parallel = parallelOf(ctx.launchSpec().parallel);
  // Reserved capacity launches one offer at a time (the CLI refuses --parallel with it).
  if (parallel > 1 && !reserved) return runHedged(ctx, planned, parallel, plan);
  let search: SearchState = newSearch(planned.offers, ctx.status.attempts);

  for (;;) {
    if (ctx.cancelRequested) return { kind: 'cancelled', attempts: search.attempts };
    const next = nextOffer(search);
    if (!next) {
      if (!ctx.status.spec.retryUntilUp) return exhaustedLaunch(search.attempts, ctx.status.spec.spot);
      const again = await waitAndReplan(ctx, plan);
      if (again === 'cancelled') return { kind: 'cancelled', attempts: search.attempts };
      if (again) {
        planned = again;
        search = replan(search, planned.offers);
      }
      continue;
    }
    const step = await serialAttempt(ctx, search, next, capsFor(planned, next.offer.cloud));
    search = step.search;
    if (step.outcome) return step.outcome;
  }
}

/** One attempt of the serial search and its bookkeeping: the search after it, and the launch's end if it ended it. */
async function serialAttempt(
  ctx: VmContext,
  search: SearchState,
  next: NonNullable<ReturnType<typeof nextOffer>>,
  caps: Capabilities,
): Promise<{ search: SearchState; outcome?: LaunchOutcome }> {
  const index = search.attempts.length;
  if (next.offer.reservation && (await enterWindow(ctx, next.offer)) === 'cancelled')
    return { search, outcome: { kind: 'cancelled', attempts: search.attempts } };
  const startedAt = new Date().toISOString();
  const ask = ctx.status.spec.reserved;
  const end = await runAttempt(ctx, next.offer, index, bootCapsOf(caps, next.offer, ask));
  const at = { index, offer: next.offer, startedAt, endedAt: new Date().toISOString() };
  if (end.ok) {
    const attempts = [...search.attempts, attemptRecord(at, end)];
    ctx.status.attempts = attempts;
    return { search, outcome: { kind: 'ready', capabilities: caps, result: { ...end.result, attempts } } };
  }
  // A queued request not served within --wait is out of capacity for that offer.
  const queued = queuedEnd(next.offer, end.phase, end.type, bootCapsOf(caps, next.offer, ask).bootTimeoutMs);
  const { record, kind, decision } = failedAttempt(ctx, at, queued ? { ...end, ...queued } : end);
  const after = afterFailure(search, next.index, next.offer, kind, decision, record);
  ctx.status.attempts = after.attempts;
  const released = alreadyReleased(end);
  if (!released) ctx.setStage('compensating');
  await compensate(ctx, record, decision, caps, { capacity: !end.cancelled && kind === 'Capacity', released });
  ctx.status.instanceIds = [];
  if (end.cancelled || ctx.cancelRequested) return { search: after, outcome: { kind: 'cancelled', attempts: after.attempts } };
  if (decision.next === 'abort' || isFatal(kind)) return { search: after, outcome: failedLaunch('fatal', kind, `${kind}: ${end.message}`, after.attempts) };
  return { search: after };
}

export interface LaunchWorkflowInput {
  spec: VmSpec;
  tuning?: Partial<Tuning>;
}

/**
 * Standalone launch (for services that manage lifetime themselves): returns the launch result,
 * or fails with `LaunchFailed` and the attempts table in its details. `vmWorkflow` runs the same
 * search inline so the VM's status and stage stay in one history.
 */
export async function launchWorkflow(input: LaunchWorkflowInput): Promise<LaunchResult> {
  const ctx = new VmContext(input.spec, input.tuning);
  setHandler(statusQuery, () => ctx.status);
  setHandler(cancelSignal, () => ctx.requestCancel());
  CancellationScope.current().cancelRequested.catch(() => ctx.requestCancel(true));
  const outcome = await CancellationScope.nonCancellable(() => runLaunch(ctx));
  countLaunch(ctx.status, outcome.kind, outcome.kind === 'ready' ? outcome.result : undefined);
  if (outcome.kind === 'ready') {
    const { workerKeyFingerprint } = outcome.result;
    ctx.setStage('ready', {
      readyAt: new Date().toISOString(),
      endpoint: outcome.result.endpoint,
      instanceIds: [outcome.result.instanceId],
      ...(workerKeyFingerprint ? { workerKeyFingerprint } : {}),
    });
    recordReady(ctx.status);
    return outcome.result;
  }
  if (outcome.kind === 'cancelled') {
    ctx.setStage('cancelled', { endedAt: new Date().toISOString() });
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.LaunchCancelled,
      message: 'launch cancelled; every attempt was compensated',
      nonRetryable: true,
      details: [{ reason: 'cancelled', attempts: outcome.attempts } satisfies LaunchFailureDetails],
    });
  }
  ctx.setStage('failed', { error: { kind: outcome.errorKind, message: outcome.message } });
  throw ApplicationFailure.create({ type: FAILURE_TYPES.LaunchFailed, message: outcome.message, nonRetryable: true, details: [outcome.details] });
}
