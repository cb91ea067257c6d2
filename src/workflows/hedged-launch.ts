/**
 * The hedged launch (`--parallel N`, N > 1): up to N attempts of the failover search in flight at
 * once, in plan order; the first to reach Ready wins and every other attempt is cancelled and
 * compensated before the launch returns. Decisions live in `core/hedge.ts` and `core/attempt.ts`;
 * each attempt is the serial search's (`attempt.ts`), run on a `Lane`.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { PlanOutput } from '../activities';
import type { LaunchResult, Stage, VmStatus } from '../core/api';
import { alreadyReleased, attemptRecord, exhaustedLaunch, failedLaunch, judgeLost, type LaunchOutcome } from '../core/attempt';
import { isFatal } from '../core/errors';
import { offersToStart, roundExhausted, settle } from '../core/hedge';
import type { Capabilities, Offer } from '../core/provider';
import { afterFailure, newSearch, replan, type SearchState } from '../core/search';
import type { Tuning } from '../core/tuning';
import { capsFor, compensate, failedAttempt, runAttempt, waitAndReplan, type AttemptHost } from './attempt';
import type { VmContext } from './context';
import type { Plan } from './plan';

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

/** The state of one hedged search: the search, the attempts in flight, the winner or the abort. */
class Hedge {
  search: SearchState;
  taken = new Set<number>();
  nextIndex: number;
  readonly flights = new Map<number, { offerIndex: number; offer: Offer; lane: Lane; done: Promise<void> }>();
  won: { result: Omit<LaunchResult, 'attempts'>; caps: Capabilities; index: number } | undefined;
  aborted: LaunchOutcome | undefined;

  constructor(
    private readonly ctx: VmContext,
    public planned: PlanOutput,
    private readonly parallel: number,
  ) {
    this.search = newSearch(planned.offers, ctx.status.attempts);
    this.nextIndex = ctx.status.attempts.length;
  }

  decided = (): boolean => this.won !== undefined || this.aborted !== undefined;
  /** Every instance id the VM holds now: the winner's and those of the lanes in flight. */
  held = (): string[] => [...new Set([...(this.won ? [this.won.result.instanceId] : []), ...[...this.flights.values()].flatMap((f) => f.lane.instanceIds)])];

  private cancelOthers(index: number): void {
    for (const [i, f] of this.flights) if (i !== index) f.lane.cancel();
  }

  private keep(s: SearchState): void {
    this.search = { ...s, attempts: [...s.attempts].sort((a, b) => a.index - b.index) };
    this.ctx.status.attempts = this.search.attempts;
  }

  /** Start the offers that may start now (none once decided or cancelled). */
  startMore(): void {
    if (this.decided() || this.ctx.cancelRequested) return;
    for (const next of offersToStart(this.search, this.taken, [...this.flights.values()], this.parallel)) {
      const index = this.nextIndex++;
      this.taken.add(next.index);
      const lane = new Lane(this.ctx, this.held, this.decided);
      const done = this.fly(index, next.index, next.offer, lane, capsFor(this.planned, next.offer.cloud)).finally(() => {
        this.flights.delete(index);
        this.ctx.status.instanceIds = this.held();
      });
      this.flights.set(index, { offerIndex: next.index, offer: next.offer, lane, done });
    }
  }

  /** One attempt in its lane, to its end and (unless it won) its compensation. */
  private async fly(index: number, offerIndex: number, offer: Offer, lane: Lane, caps: Capabilities): Promise<void> {
    const startedAt = new Date().toISOString();
    const end = await runAttempt(lane, offer, index, caps);
    const at = { index, offer, startedAt, endedAt: new Date().toISOString() };
    const stopping = this.decided() || this.ctx.cancelRequested;
    if (end.ok && settle({ ok: true, cancelled: false }, stopping) === 'win') {
      this.won = { result: end.result, caps, index };
      this.cancelOthers(index);
      this.keep({ ...this.search, attempts: [...this.search.attempts, attemptRecord(at, end)] });
      return;
    }
    const { record, kind, decision } = end.ok ? judgeLost(at, end, this.won?.index) : failedAttempt(this.ctx, at, end);
    const row = settle({ ok: end.ok, cancelled: !end.ok && end.cancelled, next: decision.next }, stopping);
    this.keep(afterFailure(this.search, offerIndex, offer, kind, decision, record));
    if (row === 'abort' || (!end.ok && !end.cancelled && isFatal(kind))) {
      this.aborted ??= failedLaunch('fatal', kind, `${kind}: ${end.ok ? '' : end.message}`, this.search.attempts);
      this.cancelOthers(index);
    }
    await compensate(this.ctx, record, decision, caps, { capacity: !end.ok && !end.cancelled && kind === 'Capacity', released: alreadyReleased(end) });
  }
}

/** Run the search with up to `parallel` attempts in flight. Never throws for cloud errors. */
export async function runHedged(ctx: VmContext, first: PlanOutput, parallel: number, plan: Plan): Promise<LaunchOutcome> {
  const h = new Hedge(ctx, first, parallel);
  for (;;) {
    h.startMore();
    if (h.flights.size > 0) {
      await Promise.race([...h.flights.values()].map((f) => f.done));
      continue;
    }
    if (h.won) {
      ctx.setOffer(h.won.result.offer);
      return { kind: 'ready', capabilities: h.won.caps, result: { ...h.won.result, attempts: h.search.attempts } };
    }
    // A user's cancel wins over a fatal attempt, as in the serial search (launch.ts checks it first).
    if (ctx.cancelRequested) return { kind: 'cancelled', attempts: h.search.attempts };
    if (h.aborted) return h.aborted.kind === 'failed' ? { ...h.aborted, details: { ...h.aborted.details, attempts: h.search.attempts } } : h.aborted;
    if (!roundExhausted(h.search, h.taken)) continue;
    if (!ctx.status.spec.retryUntilUp) return exhaustedLaunch(h.search.attempts, ctx.status.spec.spot);
    const again = await waitAndReplan(ctx, plan);
    if (again === 'cancelled') return { kind: 'cancelled', attempts: h.search.attempts };
    if (!again) continue; // a plan that fails now is retried after the next wait
    h.planned = again;
    h.search = replan(h.search, again.offers);
    h.taken = new Set();
  }
}
