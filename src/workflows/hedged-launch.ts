/**
 * The hedged launch (`--parallel N`, N > 1): up to N attempts of the failover search in flight at
 * once, in plan order; the first to reach Ready wins and every other attempt is cancelled and
 * compensated before the launch returns. Decisions live in `core/hedge.ts`; `launch.ts` runs the
 * serial search (N = 1) itself, so its commands are unchanged.
 */
import { CancellationScope, sleep, workflowInfo } from '@temporalio/workflow';
import type { PlanOutput } from '../activities';
import { isFatal, type BlockScope, type ErrorKind } from '../core/errors';
import { FAILURE_TYPES, SDK_FAILURE_KINDS } from '../core/failures';
import { offersToStart, roundExhausted, settle } from '../core/hedge';
import { locationOf, offerKey } from '../core/offers';
import { attemptIdempotencyKey } from '../core/release-scope';
import type { Capabilities, Offer } from '../core/provider';
import type { AttemptRecord, LaunchFailureDetails, LaunchResult, Stage, VmStatus } from '../core/api';
import {
  afterFailure,
  attemptsTable,
  decide,
  exhaustedKind,
  kindOfFailureType,
  newSearch,
  replan,
  type Decision,
  type Phase,
  type SearchState,
} from '../core/search';
import type { Tuning } from '../core/tuning';
import type { VmContext } from './context';
import { failureInfo } from './failure-info';
import { runTeardown } from './teardown';
import { capacityNote } from './capacity-memory';
import { countFailover, vmLog } from './telemetry';

/** What one attempt may touch of the VM: its context, or (hedged) a per-attempt view of it. */
export interface AttemptHost {
  readonly tuning: Tuning;
  readonly status: VmStatus;
  readonly cancelRequested: boolean;
  interruptibly<T>(fn: () => Promise<T>): Promise<T>;
  setOffer(offer: Offer | undefined): void;
  setStage(stage: Stage, patch?: Partial<VmStatus>): void;
}

/** How an attempt ended (launch.ts's runAttempt). */
export type HedgedEnd = { createdAtMs?: number } & (
  | { ok: true; result: Omit<LaunchResult, 'attempts'> }
  | { ok: false; phase: Phase; type: string; message: string; block?: BlockScope; cancelled: boolean; instanceIds: string[] }
);

export type HedgedOutcome =
  | { kind: 'ready'; result: LaunchResult; capabilities: Capabilities }
  | { kind: 'cancelled'; attempts: AttemptRecord[] }
  | { kind: 'failed'; details: LaunchFailureDetails; errorKind: string; message: string };

export interface HedgeDeps {
  parallel: number;
  plan: () => Promise<PlanOutput>;
  capsFor: (plan: PlanOutput, cloud: string) => Capabilities;
  runAttempt: (host: AttemptHost, offer: Offer, index: number, caps: Capabilities) => Promise<HedgedEnd>;
}

/** One attempt's view of the VM: its own cancel, its own instance ids, no stage change once a winner exists. */
class Lane implements AttemptHost {
  lost = false;
  instanceIds: string[] = [];
  private readonly scopes = new Set<CancellationScope>();
  constructor(
    private readonly ctx: VmContext,
    /** Every instance id the VM holds now: the winner's and those of the lanes in flight. */
    private readonly held: () => string[],
    private readonly decided: () => boolean,
  ) {}
  get tuning(): Tuning {
    return this.ctx.tuning;
  }
  get status(): VmStatus {
    return this.ctx.status;
  }
  get cancelRequested(): boolean {
    return this.ctx.cancelRequested || this.lost;
  }
  cancel(): void {
    this.lost = true;
    for (const s of this.scopes) s.cancel();
  }
  /** The lane's scope is made inside the VM's, so both a user cancel and a lost race interrupt the wait. */
  async interruptibly<T>(fn: () => Promise<T>): Promise<T> {
    return this.ctx.interruptibly(async () => {
      const scope = new CancellationScope({ cancellable: true });
      this.scopes.add(scope);
      try {
        if (this.lost) scope.cancel();
        return await scope.run(fn);
      } finally {
        this.scopes.delete(scope);
      }
    });
  }
  setOffer(offer: Offer | undefined): void {
    if (!this.decided()) this.ctx.setOffer(offer);
  }
  setStage(stage: Stage, patch: Partial<VmStatus> = {}): void {
    if (patch.instanceIds) this.instanceIds = patch.instanceIds;
    const instanceIds = this.held();
    if (this.decided()) this.ctx.status.instanceIds = instanceIds;
    else this.ctx.setStage(stage, { instanceIds });
  }
}

/** Run the search with up to `deps.parallel` attempts in flight. Never throws for cloud errors. */
export async function runHedged(ctx: VmContext, first: PlanOutput, deps: HedgeDeps): Promise<HedgedOutcome> {
  const spec = ctx.status.spec;
  let planned = first;
  let search: SearchState = newSearch(planned.offers, ctx.status.attempts);
  let taken = new Set<number>();
  let nextIndex = ctx.status.attempts.length;
  const flights = new Map<number, { offerIndex: number; offer: Offer; lane: Lane; done: Promise<void> }>();
  const lanes = new Map<number, Lane>();
  let won: { result: Omit<LaunchResult, 'attempts'>; caps: Capabilities; index: number } | undefined;
  let aborted: HedgedOutcome | undefined;
  const decided = (): boolean => won !== undefined || aborted !== undefined;
  const held = (): string[] => [...new Set([...(won ? [won.result.instanceId] : []), ...[...lanes.values()].flatMap((l) => l.instanceIds)])];
  const cancelOthers = (index: number): void => {
    for (const [i, f] of flights) if (i !== index) f.lane.cancel();
  };
  const keep = (s: SearchState): void => {
    search = { ...s, attempts: [...s.attempts].sort((a, b) => a.index - b.index) };
    ctx.status.attempts = search.attempts;
  };

  const fly = async (index: number, offerIndex: number, offer: Offer, lane: Lane, caps: Capabilities): Promise<void> => {
    const startedAt = new Date().toISOString();
    const end = await deps.runAttempt(lane, offer, index, caps);
    const record: AttemptRecord = {
      index,
      offer,
      outcome: 'ready',
      instanceIds: end.ok ? [end.result.instanceId] : end.instanceIds,
      compensated: false,
      startedAt,
      endedAt: new Date().toISOString(),
      ...(end.createdAtMs !== undefined ? { createdAt: new Date(end.createdAtMs).toISOString() } : {}),
    };
    const kind: ErrorKind = end.ok ? 'Failed' : kindOfFailureType(end.type);
    const decision: Decision = end.ok
      ? { compensate: 'full', next: 'continue' }
      : end.cancelled
        ? { compensate: end.phase === 'prepare' ? 'cleanup' : 'full', next: 'abort' }
        : decide(kind, end.phase, end.block);
    const row = settle({ ok: end.ok, cancelled: !end.ok && end.cancelled, next: decision.next }, decided() || ctx.cancelRequested);
    if (row === 'win' && end.ok) {
      won = { result: end.result, caps, index };
      cancelOthers(index);
      keep({ ...search, attempts: [...search.attempts, record] });
      return;
    }
    if (end.ok) {
      Object.assign(record, {
        outcome: 'cancelled',
        phase: 'connect',
        kind: SDK_FAILURE_KINDS.Cancelled,
        message: won ? `ready after attempt #${won.index + 1} won` : 'cancelled',
      });
    } else {
      Object.assign(record, {
        outcome: end.cancelled ? 'cancelled' : kind === 'Unavailable' ? 'unavailable' : 'failed',
        phase: end.phase,
        kind: end.cancelled ? SDK_FAILURE_KINDS.Cancelled : end.type === FAILURE_TYPES.BootFailed ? 'BootFailed' : kind,
        message: end.message,
        ...(decision.block ? { blocked: decision.block } : {}),
      });
      if (!end.cancelled) {
        countFailover(record.kind ?? kind, offer.cloud);
        vmLog(ctx.status, 'info', `attempt failed in ${end.phase}: ${record.kind ?? kind}; compensating`, {
          attempt: index + 1,
          kind: record.kind ?? kind,
          phase: end.phase,
          offer: offerKey(offer),
          error: end.message,
        });
      }
    }
    keep(afterFailure(search, offerIndex, offer, kind, end.ok ? { compensate: 'full', next: 'continue' } : decision, record));
    if (row === 'abort' || (!end.ok && !end.cancelled && isFatal(kind))) {
      aborted ??= {
        kind: 'failed',
        details: { reason: 'fatal', attempts: search.attempts },
        errorKind: kind,
        message: `${kind}: ${end.ok ? '' : end.message}`,
      };
      cancelOthers(index);
    }
    // A Capacity answer feeds the deployment's capacity memory through the release, as in the serial search.
    const note = !end.ok && !end.cancelled && kind === 'Capacity' ? capacityNote(offer) : undefined;
    await runTeardown(ctx, {
      at: locationOf(offer),
      vmName: spec.name,
      instanceIds: record.instanceIds,
      mode: decision.compensate === 'full' ? 'full' : 'cleanup',
      pollIntervalMs: caps.pollIntervalMs,
      ...(note ? { capacity: note } : {}),
      idempotencyKeys: [attemptIdempotencyKey(workflowInfo().workflowId, workflowInfo().runId, index)],
    });
    record.compensated = true;
    record.endedAt = new Date().toISOString();
  };

  for (;;) {
    if (!decided() && !ctx.cancelRequested) {
      for (const next of offersToStart(search, taken, [...flights.values()], deps.parallel)) {
        const index = nextIndex++;
        taken.add(next.index);
        const lane = new Lane(ctx, held, decided);
        lanes.set(index, lane);
        const done = fly(index, next.index, next.offer, lane, deps.capsFor(planned, next.offer.cloud)).finally(() => {
          flights.delete(index);
          lanes.delete(index);
          ctx.status.instanceIds = held();
        });
        flights.set(index, { offerIndex: next.index, offer: next.offer, lane, done });
      }
    }
    if (flights.size > 0) {
      await Promise.race([...flights.values()].map((f) => f.done));
      continue;
    }
    if (won) {
      ctx.setOffer(won.result.offer);
      return { kind: 'ready', capabilities: won.caps, result: { ...won.result, attempts: search.attempts } };
    }
    // A user's cancel wins over a fatal attempt, as in the serial search (launch.ts checks it first).
    if (ctx.cancelRequested) return { kind: 'cancelled', attempts: search.attempts };
    if (aborted) return aborted.kind === 'failed' ? { ...aborted, details: { ...aborted.details, attempts: search.attempts } } : aborted;
    if (!roundExhausted(search, taken)) continue;
    if (!spec.retryUntilUp) {
      const kind = exhaustedKind(search.attempts);
      const message = `every offer was tried and failed:\n${attemptsTable(search.attempts)}`;
      return { kind: 'failed', details: { reason: 'exhausted', attempts: search.attempts }, errorKind: kind, message };
    }
    ctx.setStage('waiting-retry');
    try {
      await ctx.interruptibly(() => sleep(ctx.tuning.retryUntilUpDelayMs, { summary: 'retry-until-up: wait before re-planning' }));
      planned = await deps.plan();
    } catch (err) {
      if (failureInfo(err).cancelled) return { kind: 'cancelled', attempts: search.attempts };
      continue; // a plan that fails now is retried after the next wait
    }
    search = replan(search, planned.offers);
    taken = new Set();
  }
}
