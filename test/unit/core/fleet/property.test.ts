/**
 * Seeded traces through the pure driver loop: a simulated world answers every effect after a
 * random delay, with faults (failed launches, lost VMs, failing bootstraps and cleanups,
 * duplicated and stale events) until a fault horizon, while the desired shape changes.
 */
import { describe, expect, it } from 'vitest';
import { withFleetTuning } from '../../../../src/core/fleet/backoff';
import { isConverged, reconcile } from '../../../../src/core/fleet/reconcile';
import { applyAction, attemptWorkflowId, emptyState, fold, isEffect, type FleetEvent, type FleetState } from '../../../../src/core/fleet/state';
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

function randomShape(r: () => number, gen: number): FleetShape {
  return {
    name: 'p',
    generation: gen,
    groups: [
      { id: 'a', role: 'a', count: Math.floor(r() * 4), vm: { regions: [`img${Math.floor(r() * 2)}`] }, bootstrap: boot },
      { id: 'b', role: 'b', count: Math.floor(r() * 3), vm: { regions: [`img${Math.floor(r() * 2)}`] } },
    ],
  };
}

interface Trace {
  state: FleetState;
  log: string[];
  passesAfterQuiet: number;
  converged: boolean;
  liveAtEnd: string[];
}

function run(seed: number): Trace {
  const r = rng(seed);
  const faultUntil = 20_000;
  const shapes = [randomShape(r, 1), randomShape(r, 2), randomShape(r, 3), randomShape(r, 4)];
  const shapeAt = [0, 4_000, 9_000, 15_000];
  let desired = shapes[0]!;
  let state = emptyState('p');
  let now = 0;
  const queue: { at: number; e: FleetEvent }[] = [];
  const live = new Map<string, string>(); // child id → slot
  const history: FleetEvent[] = [];
  const log: string[] = [];
  const fault = (p: number): boolean => now < faultUntil && r() < p;
  const later = (e: FleetEvent, min = 10, span = 400): void => {
    queue.push({ at: now + min + Math.floor(r() * span), e });
  };
  let passesAfterQuiet = 0;
  for (let step = 0; step < 20_000; step++) {
    const si = shapeAt.filter((t) => now >= t).length - 1;
    if (shapes[si] !== desired) {
      expect(checkRevision(desired, shapes[si]!).ok).toBe(true);
      desired = shapes[si]!;
    }
    const want = expandShape(desired);
    const pass = reconcile(state, want, now);
    if (now >= faultUntil && now >= shapeAt.at(-1)!) passesAfterQuiet++;
    for (const a of pass.actions) {
      if (isEffect(a)) expect(a.attempt, `effect ${a.kind} for a superseded attempt`).toBe(state.slots[a.slot]!.attempt);
      const before = state.slots[a.slot];
      state = applyAction(state, a, want, now, T);
      const rec = state.slots[a.slot];
      log.push(`${now} ${a.kind} ${a.slot}#${rec?.attempt ?? before?.attempt}`);
      if (!isEffect(a) || !rec) continue;
      const id = attemptWorkflowId(a.slot, a.attempt);
      const ev = { slot: a.slot, attempt: a.attempt };
      if (a.kind === 'startVm') {
        // the old attempt is fully gone before a replacement starts
        expect([...live.values()].filter((s) => s === a.slot), `two live attempts of ${a.slot}`).toEqual([]);
        live.set(id, a.slot);
        later({ type: 'vmStarted', ...ev }, 1, 20);
        if (fault(0.2)) later({ type: 'vmEnded', ...ev, outcome: 'failed' }, 50);
        else later({ type: 'vmReady', ...ev, endpoint: { host: 'h', port: 1 } }, 50);
      } else if (a.kind === 'teardownVm') {
        later({ type: 'vmEnded', ...ev, outcome: 'terminated' }, 20);
      } else if (a.kind === 'startBootstrap') {
        later(fault(0.25) ? { type: 'bootDone', ...ev, ok: false, stage: 'failed' } : { type: 'bootDone', ...ev, ok: true, stage: 'ready', lastStdoutSeq: 3 });
      } else if (a.kind === 'stopBootstrap') {
        later(fault(0.2) ? { type: 'opFailed', ...ev, op: 'stopBootstrap', reason: 'ssh' } : { type: 'bootStopped', ...ev });
      }
    }
    if (pass.actions.length) continue;
    if (isConverged(state, want) && now >= faultUntil && now >= shapeAt.at(-1)! && queue.length === 0) break;
    // next event: the earliest queued event, stored deadline, shape change, or a random fault
    queue.sort((x, y) => x.at - y.at);
    const nextShape = shapeAt.find((t) => t > now);
    const next = Math.min(queue[0]?.at ?? Infinity, pass.wakeAt ?? Infinity, nextShape ?? Infinity);
    if (next === Infinity) break;
    now = Math.max(now, next);
    while (queue.length && queue[0]!.at <= now) {
      const { e } = queue.shift()!;
      if (e.type === 'vmEnded') live.delete(attemptWorkflowId(e.slot, e.attempt));
      history.push(e);
      state = fold(state, e, now, T);
      // duplicated and stale deliveries: folding an old event again changes nothing it should not
      if (r() < 0.1 && history.length > 3) {
        const old = history[Math.floor(r() * history.length)]!;
        const cur = state.slots[old.slot];
        if (!cur || cur.attempt !== old.attempt) expect(fold(state, old, now, T)).toBe(state);
      }
      if (fault(0.02)) {
        const ready = Object.values(state.slots).filter((s) => s.vm === 'up');
        const victim = ready[Math.floor(r() * ready.length)];
        if (victim) queue.push({ at: now + 5, e: { type: 'vmEnded', slot: victim.slot, attempt: victim.attempt, outcome: 'lost' } });
      }
    }
  }
  const want = expandShape(desired);
  return { state, log, passesAfterQuiet, converged: isConverged(state, want), liveAtEnd: [...live.keys()].sort() };
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

  it.each(seeds)('seed %i: converges to the latest shape in bounded passes once faults stop, with exactly its VMs live', (seed) => {
    const t = run(seed);
    expect(t.converged).toBe(true);
    expect(t.passesAfterQuiet).toBeLessThan(400);
    const expected = Object.values(t.state.slots).map((s) => attemptWorkflowId(s.slot, s.attempt)).sort();
    expect(t.liveAtEnd).toEqual(expected);
  });

  it('different seeds explore different traces (the simulator is not a constant)', () => {
    expect(new Set(seeds.slice(0, 10).map((s) => run(s).log.length)).size).toBeGreaterThan(3);
  });
});
