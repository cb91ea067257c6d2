/**
 * Seeded traces through the pure driver loop against a simulated world of child workflows and
 * their instances. Each child reports its end by signal and closes a moment later; only the run
 * that started it sees its completion, and continue-as-new (at random quiet moments) drops the
 * outstanding results. Faults until a horizon: failed starts and launches, `k8s-failed` VMs (kept
 * or torn down by the group's policy), lost VMs, failing bootstraps and cleanups, duplicated,
 * stale and fabricated events, regressed shapes; the desired shape changes meanwhile.
 *
 * The reconciler guarantees checked at every step: events are correlated to their attempt (any
 * event of another attempt changes nothing); no effect from a stale attempt; no live lease on a
 * destroyed node (an open child always belongs to its slot's current, undestroyed record, so at
 * most one child per slot is open and a replacement starts only after the old child closed);
 * the observed generation never goes back.
 */
import { describe, expect, it } from 'vitest';
import { withFleetTuning } from '../../../../src/core/fleet/backoff';
import { isConverged, reconcile } from '../../../../src/core/fleet/reconcile';
import {
  applyAction,
  attemptWorkflowId,
  carryOver,
  emptyState,
  fold,
  isEffect,
  type FleetEvent,
  type FleetState,
  type VmEnd,
} from '../../../../src/core/fleet/state';
import { checkRevision, expandShape, type FleetShape } from '../../../../src/core/fleet/types';

const T = withFleetTuning({ backoffBaseMs: 100, backoffCapMs: 2_000 });

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const boot = { verify: [], start: 'serve', ready: { command: 'true' }, timeout: 5 };

/** The last shape uses the default policy, so kept k8s-failed VMs are replaced and the fleet converges. */
function randomShape(r: () => number, gen: number, last: boolean): FleetShape {
  const keep = !last && r() < 0.5;
  return {
    name: 'p',
    generation: gen,
    groups: [
      { id: 'a', role: 'a', count: Math.floor(r() * 4), vm: { regions: [`img${Math.floor(r() * 2)}`] }, bootstrap: boot },
      { id: 'b', role: 'b', count: Math.floor(r() * 3), vm: { regions: [`img${Math.floor(r() * 2)}`] }, ...(keep ? { onK8sFailure: 'keep' as const } : {}) },
    ],
  };
}

/** A child vmWorkflow of the simulated world. */
interface Child {
  slot: string;
  attempt: number;
  open: boolean;
  instance: boolean;
  phase: 'launching' | 'up' | 'tearing' | 'ended';
  /** The fleet run that started it: the only one that sees its completion. */
  run: number;
}

/** A queued delivery: a child's signal (reaches the current run) or a promise of run `run` (lost on continue-as-new). */
interface Queued {
  at: number;
  e?: FleetEvent;
  act?: () => void;
  run?: number;
  /** A promise the driver tracks (blocks continue-as-new); child results are not tracked. */
  tracked?: boolean;
}

interface Trace {
  state: FleetState;
  log: string[];
  passesAfterQuiet: number;
  converged: boolean;
  openAtEnd: string[];
  liveAtEnd: string[];
  seen: Record<string, number>;
}

function run(seed: number): Trace {
  const r = rng(seed);
  const faultUntil = 20_000;
  const shapes = [1, 2, 3, 4].map((g) => randomShape(r, g, g === 4));
  const shapeAt = [0, 4_000, 9_000, 15_000];
  let desired = shapes[0]!;
  let state = emptyState('p');
  let now = 0;
  let runNo = 1;
  let generation = -1;
  const queue: Queued[] = [];
  const children = new Map<string, Child>();
  const lastAttempt = new Map<string, number>();
  const history: FleetEvent[] = [];
  const log: string[] = [];
  const seen: Record<string, number> = {};
  const fault = (p: number): boolean => now < faultUntil && r() < p;
  const at = (min: number, span: number): number => now + min + Math.floor(r() * span);
  const signal = (e: FleetEvent, min = 10, span = 400): void => void queue.push({ at: at(min, span), e });
  const promise = (e: FleetEvent, min = 10, span = 400): void => void queue.push({ at: at(min, span), e, run: runNo, tracked: true });
  const open = (slot: string): Child[] => [...children.values()].filter((c) => c.open && c.slot === slot);

  /** The child deletes its instance, reports its end by signal, then closes; its run sees the completion. */
  const end = (c: Child, outcome: VmEnd): void => {
    if (c.phase === 'ended') return;
    c.phase = 'ended';
    c.instance = false;
    const ev = { slot: c.slot, attempt: c.attempt };
    const reported = at(5, 100);
    queue.push({ at: reported, e: { type: 'vmEnded', ...ev, outcome, closed: false } });
    const closes = reported + 1 + Math.floor(r() * 200);
    queue.push({ at: closes, act: () => (c.open = false) });
    queue.push({ at: closes, e: { type: 'vmEnded', ...ev, outcome, closed: true }, run: c.run });
  };

  let passesAfterQuiet = 0;
  for (let step = 0; step < 30_000; step++) {
    const si = shapeAt.filter((t) => now >= t).length - 1;
    if (shapes[si] !== desired) {
      expect(checkRevision(desired, shapes[si]!).ok).toBe(true);
      desired = shapes[si]!;
    }
    if (fault(0.01))
      expect(checkRevision(desired, { ...shapes[Math.max(0, si - 1)]!, generation: desired.generation - 1 }).ok, 'a regressed shape is rejected').toBe(false);
    const want = expandShape(desired);
    // as the driver does on every pass: the generation it evaluated, never going back
    expect(desired.generation).toBeGreaterThanOrEqual(generation);
    generation = desired.generation;
    state = { ...state, observedGeneration: generation };
    const pass = reconcile(state, want, now);
    if (now >= faultUntil && now >= shapeAt.at(-1)!) passesAfterQuiet++;
    for (const a of pass.actions) {
      const before = state.slots[a.slot];
      if (isEffect(a)) {
        expect(a.attempt, `effect ${a.kind} for a superseded attempt`).toBe(before!.attempt);
        expect(a.attempt, `effect ${a.kind} from a stale attempt`).toBe(lastAttempt.get(a.slot));
      }
      if (a.kind === 'markDestroyed')
        expect(
          open(a.slot).map((c) => c.attempt),
          `${a.slot} destroyed with its child open`,
        ).toEqual([]);
      state = applyAction(state, a, want, now, T);
      const rec = state.slots[a.slot];
      if (rec) lastAttempt.set(a.slot, Math.max(lastAttempt.get(a.slot) ?? 0, rec.attempt));
      log.push(`${now} ${a.kind} ${a.slot}#${rec?.attempt ?? before?.attempt}`);
      if (!isEffect(a) || !rec) continue;
      const id = attemptWorkflowId(a.slot, a.attempt);
      const ev = { slot: a.slot, attempt: a.attempt };
      const child = children.get(id);
      if (a.kind === 'startVm') {
        expect(
          open(a.slot).map((c) => c.attempt),
          `a replacement of ${a.slot} started beside an open child`,
        ).toEqual([]);
        if (fault(0.05)) {
          promise({ type: 'opFailed', ...ev, op: 'startVm', reason: 'start failed' }, 1, 20);
          continue;
        }
        const c: Child = { ...ev, open: true, instance: false, phase: 'launching', run: runNo };
        children.set(id, c);
        promise({ type: 'vmStarted', ...ev }, 1, 20);
        queue.push({
          at: at(50, 400),
          act: () => {
            if (c.phase !== 'launching') return;
            if (fault(0.15)) return end(c, 'failed');
            c.instance = true;
            c.phase = 'up';
            signal(fault(0.2) ? { type: 'vmK8sFailed', ...ev, reason: 'k3s failed' } : { type: 'vmReady', ...ev, endpoint: { host: 'h', port: 1 } }, 1, 10);
          },
        });
      } else if (a.kind === 'teardownVm') {
        if (!child?.open) {
          promise({ type: 'vmEnded', ...ev, outcome: 'gone', closed: true }, 1, 20); // the signal fails: closed
          continue;
        }
        promise({ type: 'teardownSent', ...ev }, 1, 20);
        if (child.phase === 'launching' || child.phase === 'up') {
          const outcome = child.phase === 'launching' ? 'cancelled' : 'terminated';
          child.phase = 'tearing';
          queue.push({ at: at(20, 200), act: () => end(child, outcome) });
        }
      } else if (a.kind === 'startBootstrap') {
        promise(
          fault(0.25) ? { type: 'bootDone', ...ev, ok: false, stage: 'failed' } : { type: 'bootDone', ...ev, ok: true, stage: 'ready', lastStdoutSeq: 3 },
        );
      } else if (a.kind === 'stopBootstrap') {
        promise(fault(0.2) ? { type: 'opFailed', ...ev, op: 'stopBootstrap', reason: 'ssh' } : { type: 'bootStopped', ...ev });
      }
    }
    if (pass.actions.length) continue;
    if (isConverged(state, want) && now >= faultUntil && now >= shapeAt.at(-1)! && queue.length === 0) break;
    // continue-as-new at a quiet moment (nothing tracked in flight): outstanding child results are lost
    if (fault(0.02) && !queue.some((q) => q.tracked && q.run === runNo)) {
      state = carryOver(state);
      runNo += 1;
      seen.continueAsNew = (seen.continueAsNew ?? 0) + 1;
    }
    // next event: the earliest queued event, stored deadline, shape change, or a random fault
    queue.sort((x, y) => x.at - y.at);
    const nextShape = shapeAt.find((t) => t > now);
    const next = Math.min(queue[0]?.at ?? Infinity, pass.wakeAt ?? Infinity, nextShape ?? Infinity);
    if (next === Infinity) break;
    now = Math.max(now, next);
    while (queue.length && queue[0]!.at <= now) {
      const q = queue.shift()!;
      q.act?.();
      if (!q.e || (q.run !== undefined && q.run !== runNo)) continue;
      const e = q.e;
      seen[e.type] = (seen[e.type] ?? 0) + 1;
      history.push(e);
      const cur = state.slots[e.slot];
      const after = fold(state, e, now, T);
      if (!cur || cur.attempt !== e.attempt) expect(after, `${e.type} of ${e.slot}#${e.attempt} changed another attempt`).toBe(state);
      state = after;
      // duplicated and stale deliveries, and fabricated events of other attempts, change nothing they should not
      if (r() < 0.1 && history.length > 3) {
        const old = history[Math.floor(r() * history.length)]!;
        const c = state.slots[old.slot];
        if (!c || c.attempt !== old.attempt) expect(fold(state, old, now, T)).toBe(state);
        if (c)
          for (const e2 of [
            { ...old, slot: c.slot, attempt: c.attempt + 1 + Math.floor(r() * 3) },
            { ...old, slot: c.slot, attempt: c.attempt - 1 },
          ] as FleetEvent[])
            expect(fold(state, e2, now, T)).toBe(state);
      }
      if (fault(0.02)) {
        const up = [...children.values()].filter((c) => c.phase === 'up');
        const victim = up[Math.floor(r() * up.length)];
        if (victim) queue.push({ at: now + 5, act: () => end(victim, 'lost') });
      }
    }
    // no live lease on a destroyed node: every open child is its slot's current, undestroyed attempt
    for (const c of children.values()) {
      if (!c.open) continue;
      const rec = state.slots[c.slot];
      expect(rec?.attempt, `open child ${c.slot}#${c.attempt} not owned by its slot`).toBe(c.attempt);
      expect(rec?.stage, `open child ${c.slot}#${c.attempt} on a destroyed slot`).not.toBe('destroyed');
    }
  }
  const want = expandShape(desired);
  const ids = (p: (c: Child) => boolean): string[] =>
    [...children.entries()]
      .filter(([, c]) => p(c))
      .map(([id]) => id)
      .sort();
  return { state, log, passesAfterQuiet, converged: isConverged(state, want), openAtEnd: ids((c) => c.open), liveAtEnd: ids((c) => c.instance), seen };
}

describe('seeded traces', () => {
  const seeds = Array.from({ length: 60 }, (_, i) => i * 7919 + 1);

  it('identical traces give identical state', () => {
    for (const seed of seeds.slice(0, 10)) {
      const a = run(seed);
      const b = run(seed);
      expect(b.state).toEqual(a.state);
      expect(b.log).toEqual(a.log);
    }
  });

  it.each(seeds)('seed %i: converges to the latest shape in bounded passes once faults stop, with exactly its VMs live and open', (seed) => {
    const t = run(seed);
    expect(t.converged).toBe(true);
    expect(t.passesAfterQuiet).toBeLessThan(400);
    const expected = Object.values(t.state.slots)
      .map((s) => attemptWorkflowId(s.slot, s.attempt))
      .sort();
    expect(t.liveAtEnd).toEqual(expected);
    expect(t.openAtEnd).toEqual(expected);
  });

  it('the traces send k8s-failed, bootstrap failures, reported-but-open ends and continue-as-new', () => {
    const total: Record<string, number> = {};
    for (const seed of seeds) for (const [k, n] of Object.entries(run(seed).seen)) total[k] = (total[k] ?? 0) + n;
    expect(total).toMatchObject({
      vmK8sFailed: expect.any(Number),
      teardownSent: expect.any(Number),
      continueAsNew: expect.any(Number),
      bootDone: expect.any(Number),
    });
    expect(total.vmK8sFailed).toBeGreaterThan(20);
    expect(total.continueAsNew).toBeGreaterThan(20);
  });

  it('different seeds explore different traces (the simulator is not a constant)', () => {
    expect(new Set(seeds.slice(0, 10).map((s) => run(s).log.length)).size).toBeGreaterThan(3);
  });
});
