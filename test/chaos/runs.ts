/**
 * Reading one run's facts for the oracle: its attempts, plan, close, stages and the activities
 * between two points. An attempt is one prepareAndCreate, its release one releaseAt.
 */
import type { AttemptRecord, VmStatus } from '../../src/core/api';
import { laneOf } from '../../src/core/hedge';
import { offerKey } from '../../src/core/offers';
import type { Offer } from '../../src/core/provider';
import type { Evidence, Violation } from './evidence';
import type { Fact, RunFacts } from './history';
import type { Trace } from './trace';

export interface Attempt {
  offer: Offer;
  /** Index of the attempt's first fact (prepareAndCreate) in the run's facts. */
  at: number;
  /**
   * Index of the next attempt's first fact in the same lane, or of the close. Serial runs have one
   * lane (`*`): the next attempt of any offer. Hedged runs (`--parallel N`) have one lane per
   * `laneOf(offer)`: the attempts of one lane never overlap, those of different lanes interleave.
   */
  until: number;
  lane: string;
  createScheduled: boolean;
  /** Index of the fact where the attempt's prepare/create activity failed, if it did. */
  failedAt?: number;
  /** The failure type it failed with there. */
  failedWith?: string;
  /** Its refused create was released by the create activity itself (src/activities/attempt.ts): nothing for the workflow to compensate. */
  released?: boolean;
  record?: AttemptRecord;
}

export const TEARDOWN = new Set(['releaseAt']);
/** Activities that start an attempt. */
export const ATTEMPT_START = new Set(['prepareAndCreate']);
/** Activities that may create an instance. */
export const CREATES = new Set(['prepareAndCreate']);

interface ReleaseArg {
  at?: { region?: string };
  mode?: 'full' | 'cleanup';
  exact?: boolean;
}
/**
 * The exact deletion of a preempted instance retiring beside its replacement (src/workflows/retire.ts):
 * it runs beside the replacement's attempts, in the same run, and compensates none of them.
 */
export const isRetiring = (a: Extract<Fact, { e: 'activity' }>): boolean => a.type === 'releaseAt' && (a.input[0] as ReleaseArg | undefined)?.exact === true;
/** A releaseAt that deletes an attempt's instances and waits until gone (not only a side-resource cleanup, not a retiring instance's). */
export const isFullRelease = (a: Extract<Fact, { e: 'activity' }>): boolean =>
  a.type === 'releaseAt' && (a.input[0] as ReleaseArg | undefined)?.mode === 'full' && !isRetiring(a);

export function closeOf(run: RunFacts): Extract<Fact, { e: 'closed' }> | undefined {
  return run.facts.find((f): f is Extract<Fact, { e: 'closed' }> => f.e === 'closed');
}

/** The status a completed run returned, or the attempts a failed launch carried. */
export function finalAttempts(run: RunFacts): AttemptRecord[] | undefined {
  const c = closeOf(run);
  if (c?.status === 'completed') return (c.result as VmStatus | undefined)?.attempts;
  if (c?.status === 'failed') return (c.details as { attempts?: AttemptRecord[] } | undefined)?.attempts;
  return undefined;
}

export function planOf(run: RunFacts): Offer[] | undefined {
  const plan = run.facts.find((f): f is Extract<Fact, { e: 'activity' }> => f.e === 'activity' && f.type === 'planOffers');
  if (!plan) return undefined;
  const done = run.facts.find((f): f is Extract<Fact, { e: 'activityDone' }> => f.e === 'activityDone' && f.id === plan.id);
  return (done?.result as { offers?: Offer[] } | undefined)?.offers;
}

/** The region an activity acts in: its first argument is an offer, a location, or a release target. */
export const regionOfAt = (a: Extract<Fact, { e: 'activity' }>): string | undefined => {
  const first = a.input[0] as { region?: string; cloud?: string; at?: { region?: string; cloud?: string } } | undefined;
  return first?.region ?? first?.at?.region;
};

/** The lane an activity acts in (see {@link Attempt.until}); `*` for a serial run. */
export function laneOfAt(a: Extract<Fact, { e: 'activity' }>, parallel: number): string {
  if (parallel <= 1) return '*';
  const first = a.input[0] as { region?: string; cloud?: string; at?: { region?: string; cloud?: string } } | undefined;
  return laneOf({ cloud: first?.cloud ?? first?.at?.cloud ?? '?', region: first?.region ?? first?.at?.region ?? '?' });
}

/**
 * The run's attempts in start order, each with the window of facts that belong to it. `parallel`:
 * the VM's `--parallel N` (1: serial, one window after the other).
 */
export function attemptsOf(run: RunFacts, parallel = 1): Attempt[] {
  const out: Attempt[] = [];
  const records = finalAttempts(run);
  const used = new Set<number>();
  const scheduled = new Map<number, Extract<Fact, { e: 'activity' }>>();
  const latestIn = (lane: string): Attempt | undefined => {
    for (let j = out.length - 1; j >= 0; j--) if (out[j]!.lane === lane) return out[j];
    return undefined;
  };
  const recordFor = (offer: Offer, i: number): AttemptRecord | undefined => {
    // Records are sorted by index, which is the start order; match on the offer to be sure.
    const byIndex = records?.[i];
    const pick =
      byIndex && offerKey(byIndex.offer) === offerKey(offer) && !used.has(i)
        ? i
        : (records ?? []).findIndex((r, j) => !used.has(j) && offerKey(r.offer) === offerKey(offer));
    if (pick === undefined || pick < 0) return undefined;
    used.add(pick);
    return records?.[pick];
  };
  run.facts.forEach((f, i) => {
    if (f.e === 'activity') scheduled.set(f.id, f);
    if (f.e === 'activity' && ATTEMPT_START.has(f.type)) {
      const offer = f.input[0] as Offer;
      const lane = laneOfAt(f, parallel);
      const prev = latestIn(lane);
      if (prev && prev.until > i) prev.until = i;
      const record = recordFor(offer, out.length);
      out.push({ offer, at: i, until: run.facts.length, lane, createScheduled: false, ...(record ? { record } : {}) });
    }
    if (f.e === 'activity' && CREATES.has(f.type)) {
      const cur = latestIn(laneOfAt(f, parallel));
      if (cur) cur.createScheduled = true;
    }
    if (f.e === 'activityFailed') {
      const a = scheduled.get(f.id);
      if (a && (ATTEMPT_START.has(a.type) || CREATES.has(a.type))) {
        const cur = latestIn(laneOfAt(a, parallel));
        if (cur && cur.failedAt === undefined) Object.assign(cur, { failedAt: i, failedWith: f.failureType });
        // A merged prepareAndCreate whose prepare step failed never reached the create.
        if (cur && f.prepareStep) cur.createScheduled = false;
        if (cur && f.released) cur.released = true;
      }
    }
    if (f.e === 'closed') for (const a of out) if (a.until > i) a.until = i;
  });
  return out;
}

export const activitiesBetween = (run: RunFacts, from: number, to: number): Extract<Fact, { e: 'activity' }>[] =>
  run.facts.slice(from, to).filter((f): f is Extract<Fact, { e: 'activity' }> => f.e === 'activity');

export function completed(run: RunFacts, id: number): boolean {
  return run.facts.some((f) => f.e === 'activityDone' && f.id === id);
}

export const v = (invariant: string, vm: string | undefined, detail: string): Violation =>
  vm === undefined ? { invariant, detail } : { invariant, vm, detail };

export function perRun(fn: (run: RunFacts, ev: Evidence) => string[], id: string): (ev: Evidence) => Violation[] {
  return (ev) => ev.runs.flatMap((run) => fn(run, ev).map((d) => v(id, run.vmName, `${run.runId.slice(-8)}: ${d}`)));
}

export function injectedKinds(t: Trace): Set<string> {
  return new Set(t.faults.map((f) => f.error));
}

export function lastStageBefore(run: RunFacts, i: number): string | undefined {
  for (let j = i - 1; j >= 0; j--) {
    const f = run.facts[j]!;
    if (f.e === 'stage') return f.stage;
  }
  return undefined;
}

export function everReady(run: RunFacts, i: number): boolean {
  return run.facts.slice(0, i).some((f) => f.e === 'stage' && f.stage === 'ready');
}

/** Index of the first fact that makes the run stop launching (cancel signal, cancel request, teardown before ready). */
export function cancelPoint(run: RunFacts): number | undefined {
  const i = run.facts.findIndex(
    (f, j) =>
      f.e === 'cancelRequested' ||
      (f.e === 'signal' && (f.name === 'cancel' || (f.name === 'teardown' && !everReady(run, j) && lastStageBefore(run, j) !== 'leaked'))),
  );
  return i < 0 ? undefined : i;
}
