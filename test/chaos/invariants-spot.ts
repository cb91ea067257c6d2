/**
 * The oracle's invariants on spot preemption (issue 30): what a preempted VM becomes, and what
 * the cloud bills per name meanwhile, both read from the cloud (the fake's call log and the
 * samples' live instances), not from what the workflows believe.
 *
 * | a preempted VM      | must become                                                                |
 * |---------------------|----------------------------------------------------------------------------|
 * | under `--recover`   | Ready again on another instance the cloud bills, `lost` saying why it gave up (`recovered.gaveUp`), or its relaunch `failed` |
 * | without             | `lost` (its run ends so), or Ready again when the trace started it again  |
 *
 * Billed per name, at every moment: at most N (its `--parallel`), or two while a preempted
 * instance of the name is still listed (the old one retiring beside the replacement). An
 * instance is billed from its create until its delete, its preemption's stop, or its vanish.
 */
import type { VmStatus } from '../../src/core/api';
import type { Evidence, Invariant, PreemptionPlayed, Violation } from './evidence';
import { closeOf, v } from './runs';
import { parallelOfVm } from './trace';

/**
 * What became of a preempted VM: Ready again; ended lost; under `--recover`, its relaunch ended
 * `failed` (visibly: the status says why; `failure-justified` judges whether the trace's faults
 * explain it); `lost-unexplained` is lost under `--recover` without saying why it stopped recovering.
 */
export type PreemptionOutcome = 'ready' | 'lost' | 'relaunch-failed' | 'lost-unexplained' | undefined;

/** Ready on an instance other than the preempted one, which the cloud lists and bills right after the query. */
function readyAgain(ev: Evidence, key: string, p: PreemptionPlayed): boolean {
  return ev.samples.some((s) => {
    const id = s.instanceIds?.[0];
    return (
      s.vm === key &&
      s.t >= p.t &&
      s.stage === 'ready' &&
      id !== undefined &&
      id !== p.id &&
      s.live.some((i) => i.id === id && i.billed !== false && !i.preempted)
    );
  });
}

/** Per preempted VM (its evidence key): what became of it. */
export function preemptionOutcomes(ev: Evidence): Record<string, PreemptionOutcome> {
  const out: Record<string, PreemptionOutcome> = {};
  for (const [key, p] of Object.entries(ev.preempted ?? {})) {
    if (readyAgain(ev, key, p)) {
      out[key] = 'ready';
      continue;
    }
    const runs = ev.runs.filter((r) => r.vmName === key);
    const lostAt = runs.findIndex((r) => r.facts.some((f) => f.e === 'stage' && f.stage === 'lost' && (f.atMs === undefined || f.atMs >= p.noticeAt - 2_000)));
    if (p.recover && lostAt >= 0 && runs.slice(lostAt + 1).some((r) => closeOf(r)?.status === 'failed')) {
      out[key] = 'relaunch-failed';
      continue;
    }
    const lost = (lostAt < 0 ? [] : runs.slice(lostAt))
      .map((r) => closeOf(r))
      .map((c) => (c?.status === 'completed' ? (c.result as VmStatus | undefined) : undefined))
      .find((s) => s?.stage === 'lost');
    out[key] = lost === undefined ? undefined : !p.recover || lost.recovered?.gaveUp ? 'lost' : 'lost-unexplained';
  }
  return out;
}

type Billing = { at: number; kind: 'create' | 'gone' | 'preempt' | 'stop'; id: string; vm?: string };

/** The bill's events at the cloud, in time order: creates and deletes (call log), preemptions and their stops, vanishes. */
function billingEvents(ev: Evidence): Billing[] {
  const out: Billing[] = [];
  for (const c of ev.calls ?? []) {
    if (c.at === undefined) continue;
    if (c.primitive === 'create' && !c.error && c.id) out.push({ at: c.at, kind: 'create', id: c.id, ...(c.vmName ? { vm: c.vmName } : {}) });
    for (const r of c.removed ?? []) out.push({ at: c.at, kind: 'gone', id: r.id });
  }
  for (const p of Object.values(ev.preempted ?? {})) out.push({ at: p.noticeAt, kind: 'preempt', id: p.id }, { at: p.reclaimAt, kind: 'stop', id: p.id });
  for (const [id, at] of Object.entries(ev.vanishedIds ?? {})) out.push({ at, kind: 'gone', id });
  // Stable: calls at the same millisecond keep the cloud's order.
  return out
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.at - b.e.at || a.i - b.i)
    .map((x) => x.e);
}

/** Over the call log: the first moment each name had more billed instances than allowed. */
function billedOverTime(ev: Evidence): Violation[] {
  const billed = new Map<string, string>();
  const listedPreempted = new Map<string, string>();
  const vmOf = new Map<string, string>();
  const flagged = new Set<string>();
  const out: Violation[] = [];
  for (const e of billingEvents(ev)) {
    if (e.kind === 'create' && e.vm) vmOf.set(e.id, e.vm);
    const vm = vmOf.get(e.id);
    if (vm === undefined) continue;
    if (e.kind === 'create') billed.set(e.id, vm);
    if (e.kind === 'stop' || e.kind === 'gone') billed.delete(e.id);
    if (e.kind === 'preempt') listedPreempted.set(e.id, vm);
    if (e.kind === 'gone') listedPreempted.delete(e.id);
    const mine = [...billed].filter(([, k]) => k === vm).map(([id]) => id);
    const replacing = [...listedPreempted.values()].includes(vm);
    const bound = replacing ? 2 : parallelOfVm(ev.trace, vm);
    if (mine.length > bound && !flagged.has(vm)) {
      flagged.add(vm);
      out.push(
        v(
          'billed-per-name',
          vm,
          `cloud: ${mine.length} billed at once (${mine.join(', ')}), at most ${bound}${replacing ? ' while a preempted one is replaced' : ''}`,
        ),
      );
    }
  }
  return out;
}

/** Over the samples (every level): a snapshot of the cloud with more billed instances of a name than allowed. */
function billedInSamples(ev: Evidence): Violation[] {
  return ev.samples
    .filter((s) => {
      const billed = s.live.filter((i) => i.billed !== false).length;
      return billed > (s.live.some((i) => i.preempted) ? 2 : parallelOfVm(ev.trace, s.vm));
    })
    .slice(0, 3)
    .map((s) =>
      v(
        'billed-per-name',
        s.vm,
        `sampled: ${s.live.map((i) => `${i.id}${i.preempted ? '(preempted)' : ''}${i.billed === false ? '(stopped)' : ''}`).join(', ')} (stage ${s.stage ?? '?'})`,
      ),
    );
}

/** How each run of the VM ended, for the violation's detail: `1a2b3c4d continued, 5e6f7a8b completed terminated`. */
function runsLine(ev: Evidence, key: string): string {
  return ev.runs
    .filter((r) => r.vmName === key)
    .map((r) => {
      const c = closeOf(r);
      const stage = c?.status === 'completed' ? ` ${(c.result as VmStatus | undefined)?.stage ?? '?'}` : '';
      return `${r.runId.slice(-8)} ${c?.status ?? 'open'}${stage}`;
    })
    .join(', ');
}

export const SPOT_INVARIANTS: Invariant[] = [
  {
    id: 'preempted-ready-or-lost',
    says: 'a preempted VM under --recover is Ready again on another instance the cloud bills, or visibly lost (stage lost, saying why it stopped recovering); without --recover it ends lost',
    check: (ev) =>
      Object.entries(preemptionOutcomes(ev)).flatMap(([key, o]) => {
        const p = ev.preempted![key]!;
        const what = `preempted ${p.id} (${p.noticeMs > 0 ? `notice ${p.noticeMs} ms` : 'no notice'}${p.recover ? ', --recover' : ''})`;
        if (o === undefined)
          return [v('preempted-ready-or-lost', key, `${what}: neither Ready again on another billed instance nor ended lost (runs: ${runsLine(ev, key)})`)];
        if (o === 'lost-unexplained') return [v('preempted-ready-or-lost', key, `${what}: ended lost under --recover without saying why it gave up`)];
        return [];
      }),
  },
  {
    id: 'billed-per-name',
    says: 'at most N billed instances per VM name at any moment, N its --parallel, and at most two while a preempted one is replaced (counted at the cloud: create to delete, stop or vanish)',
    check: (ev) => {
      const overTime = billedOverTime(ev);
      const flagged = new Set(overTime.map((x) => x.vm));
      return [...overTime, ...billedInSamples(ev).filter((x) => !flagged.has(x.vm))];
    },
  },
];
