/**
 * The oracle's invariants on the order of a launch's attempts, serial or hedged (`--parallel N`).
 * A serial search tries offers one after the other in plan order; a hedged one keeps up to N in
 * flight, in plan order, skipping an offer only while an attempt in flight holds its lane
 * (`laneOf` in src/core/hedge.ts: two attempts of one VM never share a region's identity space).
 */
import { laneOf } from '../../src/core/hedge';
import { offerKey } from '../../src/core/offers';
import type { Offer } from '../../src/core/provider';
import type { Evidence, Invariant, Violation } from './evidence';
import type { RunFacts } from './history';
import { activitiesBetween, attemptsOf, closeOf, completed, isFullRelease, isRetiring, laneOfAt, perRun, planOf, regionOfAt, v, type Attempt } from './runs';
import { parallelOfVm } from './trace';

const parallelOfRun = (run: RunFacts, ev: Evidence): number => parallelOfVm(ev.trace, run.vmName);

/** Index of the fact where `a` freed its lane: its first completed release (any mode) in its lane. */
function freedAt(run: RunFacts, a: Attempt, parallel: number): number | undefined {
  for (const x of activitiesBetween(run, a.at + 1, a.until)) {
    const release = x.type === 'releaseAt' && !isRetiring(x);
    if (!release || laneOfAt(x, parallel) !== a.lane) continue;
    const done = run.facts.findIndex((f) => f.e === 'activityDone' && f.id === x.id);
    if (done >= 0) return done;
  }
  return undefined;
}

/** Regions a Quota answer blocked before fact `i` (the failure was known by then). */
function quotaBlockedBefore(attempts: Attempt[], i: number): Set<string> {
  return new Set(attempts.filter((a) => (a.record?.kind ?? a.failedWith) === 'Quota' && a.failedAt !== undefined && a.failedAt < i).map((a) => a.offer.region));
}

/** The index of the stage fact that ends the launch (ready, failed, cancelled, …), or the close. */
export function launchEnd(run: RunFacts): number {
  const LAUNCH_OVER = new Set(['ready', 'k8s', 'k8s-failed', 'failed', 'cancelled', 'terminated', 'lost']);
  const i = run.facts.findIndex((f) => (f.e === 'stage' && LAUNCH_OVER.has(f.stage)) || f.e === 'closed');
  return i < 0 ? run.facts.length : i;
}

export const SEARCH_INVARIANTS: Invariant[] = [
  {
    id: 'plan-order',
    says: 'offers are tried in plan order (preference); hedged, in plan order within each lane',
    check: perRun((run, ev) => {
      const plan = planOf(run);
      if (!plan) return [];
      const out: string[] = [];
      const last = new Map<string, number>();
      attemptsOf(run, parallelOfRun(run, ev)).forEach((a, i) => {
        const x = plan.findIndex((o) => offerKey(o) === offerKey(a.offer));
        const before = last.get(a.lane);
        if (x < 0) out.push(`attempt ${i} is not a planned offer`);
        else if (before !== undefined && x <= before) out.push(`attempt ${i} goes back to plan index ${x} after ${before}`);
        if (x >= 0) last.set(a.lane, x);
      });
      return out;
    }, 'plan-order'),
  },
  {
    id: 'no-skip-without-block',
    says: 'the next attempt is the first unblocked offer (hedged: whose lane is free); an exhausted search left no unblocked offer untried',
    check: perRun((run, ev) => {
      const plan = planOf(run);
      if (!plan) return [];
      const parallel = parallelOfRun(run, ev);
      const out: string[] = [];
      const attempts = attemptsOf(run, parallel);
      const taken = new Set<string>();
      /** A lane is busy at fact `i` while an attempt started there before `i` has not freed it. */
      const busy = (o: Offer, i: number): boolean =>
        parallel > 1 && attempts.some((k) => k.at < i && k.lane === laneOf(o) && (freedAt(run, k, parallel) ?? Infinity) > i);
      for (const a of attempts) {
        const x = plan.findIndex((o) => offerKey(o) === offerKey(a.offer));
        const quota = quotaBlockedBefore(attempts, a.at);
        for (let i = 0; i < x; i++) {
          const o = plan[i]!;
          if (!taken.has(offerKey(o)) && !quota.has(o.region) && !busy(o, a.at)) out.push(`skipped unblocked offer ${offerKey(o)}`);
        }
        taken.add(offerKey(a.offer));
        // Serial: everything before the attempt counts as passed (reported above if skipped).
        if (parallel <= 1) for (let i = 0; i < x; i++) taken.add(offerKey(plan[i]!));
      }
      const c = closeOf(run);
      if (c?.status === 'failed' && (c.details as { reason?: string } | undefined)?.reason === 'exhausted') {
        const quota = quotaBlockedBefore(attempts, run.facts.length);
        for (const o of plan) if (!taken.has(offerKey(o)) && !quota.has(o.region)) out.push(`exhausted but never tried ${offerKey(o)}`);
      }
      return out;
    }, 'no-skip-without-block'),
  },
  {
    id: 'no-loser-left',
    says: 'when a hedged launch ends, no instance of a losing attempt exists: each was deleted and gone before the launch returned',
    check: (ev) => {
      const out: Violation[] = [];
      for (const run of ev.runs) {
        const parallel = parallelOfRun(run, ev);
        const c = closeOf(run);
        // A run that continued as new (--recover) carries no attempt records: its winner looks like a loser; the samples below judge it.
        if (parallel <= 1 || c?.status === 'terminated' || c?.status === 'continued') continue;
        const end = launchEnd(run);
        for (const a of attemptsOf(run, parallel)) {
          if (a.at > end || !a.createScheduled || a.record?.outcome === 'ready' || a.record?.kind === 'Unavailable' || a.released) continue;
          const gone = activitiesBetween(run, a.at, Math.min(a.until, end)).some(
            (x) => isFullRelease(x) && regionOfAt(x) === a.offer.region && completed(run, x.id),
          );
          if (!gone) out.push(v('no-loser-left', run.vmName, `${run.runId.slice(-8)}: losing attempt ${offerKey(a.offer)} not gone when the launch ended`));
        }
      }
      // The cloud's view: once a hedged VM is ready, only the winner's instance lives.
      for (const s of ev.samples) {
        if (s.stage !== 'ready' || parallelOfVm(ev.trace, s.vm) <= 1) continue;
        // A preempted instance retiring beside its replacement is not a loser (billed-per-name bounds it).
        const extra = s.live.filter((i) => !(s.instanceIds ?? []).includes(i.id) && !i.preempted);
        if (extra.length > 0)
          out.push(v('no-loser-left', s.vm, `ready on ${(s.instanceIds ?? []).join(',')} while ${extra.map((i) => `${i.id}@${i.region}`).join(', ')} live`));
      }
      return out.slice(0, 5);
    },
  },
];
