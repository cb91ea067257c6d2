import { describe, expect, it } from 'vitest';
import { generate, rng, shrinkCandidates, size, type Trace } from '../../chaos/trace';

describe('chaos trace generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    expect(generate(42, 'fake')).toEqual(generate(42, 'fake'));
    expect(generate(42, 'local')).toEqual(generate(42, 'local'));
    const distinct = new Set(Array.from({ length: 50 }, (_, i) => JSON.stringify({ ...generate(i + 1, 'fake'), seed: 0 })));
    expect(distinct.size).toBeGreaterThan(45);
  });

  it('rng is a deterministic stream in [0, 1)', () => {
    const a = rng(7);
    const b = rng(7);
    const xs = Array.from({ length: 100 }, () => a());
    expect(xs).toEqual(Array.from({ length: 100 }, () => b()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('covers the whole alphabet over 256 seeds, with every fault finite', () => {
    const traces = Array.from({ length: 256 }, (_, i) => generate(i + 1, 'fake'));
    const faults = traces.flatMap((t) => t.faults);
    expect(faults.every((f) => f.times >= 1 && f.times <= 6)).toBe(true);
    const kinds = new Set(faults.map((f) => `${f.primitive}:${f.error}${f.ambiguous ? ':amb' : ''}`));
    for (const k of [
      'create:Transient',
      'create:Capacity',
      'create:Quota',
      'create:Unavailable',
      'create:Failed',
      'create:Credentials',
      'create:Capacity:amb',
      'create:Transient:amb',
      'delete:Transient',
      'delete:Failed',
      'observe:Transient',
      'prepare:Unavailable',
      'plan:Transient',
      'cleanup:Failed',
    ]) {
      expect(kinds, k).toContain(k);
    }
    const ops = new Set(traces.flatMap((t) => t.vms.map((v) => v.op.op)));
    expect([...ops].sort()).toEqual([
      'cancel',
      'none',
      'preempt-when-ready',
      'teardown',
      'teardown-when-ready',
      'terminate',
      'terminate-when-ready',
      'vanish-when-ready',
    ]);
    // Issue 18/16 additions: hedged starts, two deployments with overlapping names; a terminated name is never re-started.
    expect(new Set(traces.flatMap((t) => t.vms.flatMap((v) => (v.parallel ? [v.parallel] : []))))).toEqual(new Set([2, 3, 4]));
    const twoDeployments = traces.filter((t) => t.second?.length);
    expect(twoDeployments.length).toBeGreaterThan(25);
    for (const t of twoDeployments) for (const v of t.second!) expect(t.vms.map((w) => w.vm)).toContain(v.vm);
    expect(traces.every((t) => t.vms.every((v) => !(v.restart && v.op.op.startsWith('terminate'))))).toBe(true);
    expect(traces.some((t) => t.vms.length === 3)).toBe(true);
    expect(traces.some((t) => t.vms.some((v) => v.restart))).toBe(true);
    expect(traces.some((t) => t.vms.some((v) => v.duplicateStart))).toBe(true);
    expect(traces.some((t) => t.bootMs > 0)).toBe(true);
    expect(traces.some((t) => t.kills.some((k) => k.at === 'call'))).toBe(true);
    expect(traces.some((t) => t.kills.some((k) => k.at === 'stage'))).toBe(true);
    // Ambiguous Unavailable would break the provider contract (Unavailable = nothing created).
    expect(faults.some((f) => f.ambiguous && f.error === 'Unavailable')).toBe(false);
  });

  it('with the additions, traces stay well-formed: kill points and second-deployment VMs name existing VMs', () => {
    for (let seed = 1; seed <= 64; seed++) {
      const g = generate(seed, 'fake');
      expect(g.faults.every((f) => f.times >= 1)).toBe(true);
      expect(g.kills.every((k) => k.at === 'call' || k.vm < g.vms.length)).toBe(true);
      expect((g.second ?? []).every((v) => v.vm < g.vms.length && !v.restart && !v.duplicateStart)).toBe(true);
    }
  });

  it('local traces stay on the local cloud (no call-count kills: the local cloud has no call log)', () => {
    const traces = Array.from({ length: 64 }, (_, i) => generate(i + 1, 'local'));
    expect(traces.every((t) => t.kills.every((k) => k.at === 'stage'))).toBe(true);
    expect(traces.flatMap((t) => t.faults).every((f) => f.region === undefined || f.region.startsWith('local-'))).toBe(true);
  });
});

describe('chaos shrinker', () => {
  const big: Trace = {
    seed: 9,
    level: 'fake',
    bootMs: 1_200,
    faults: [
      { primitive: 'create', error: 'Capacity', times: 1, ambiguous: true },
      { primitive: 'delete', error: 'Transient', times: 4 },
    ],
    vms: [
      { vm: 0, startAfterMs: 0, op: { op: 'none' }, duplicateStart: false, restart: false },
      { vm: 1, startAfterMs: 300, op: { op: 'cancel', afterMs: 500 }, duplicateStart: true, restart: true },
    ],
    kills: [{ at: 'stage', vm: 1, stage: 'booting' }],
  };

  it('proposes only strictly smaller traces, and renumbers VMs and their kill points', () => {
    const cs = shrinkCandidates(big);
    expect(cs.length).toBeGreaterThan(5);
    for (const c of cs) expect(size(c)).toBeLessThan(size(big));
    const dropFirst = cs[0]!;
    expect(dropFirst.vms.map((v) => v.vm)).toEqual([0]);
    expect(dropFirst.kills).toEqual([{ at: 'stage', vm: 0, stage: 'booting' }]);
    expect(shrinkCandidates({ ...big, second: [{ ...big.vms[1]!, duplicateStart: false, restart: false }] }).some((c) => c.second === undefined)).toBe(true);
    const dropSecond = cs[1]!;
    expect(dropSecond.kills).toEqual([]);
    expect(cs.some((c) => c.faults.find((f) => f.primitive === 'delete')?.times === 3)).toBe(true);
  });

  it('a greedy loop reaches a minimal trace that still has the culprit', () => {
    // Property "fails" = has an ambiguous non-transient create: the minimum is one VM, that fault, nothing else.
    const fails = (t: Trace): boolean => t.faults.some((f) => f.ambiguous && f.error !== 'Transient');
    let t = big;
    for (;;) {
      const next = shrinkCandidates(t).find(fails);
      if (!next) break;
      t = next;
    }
    expect(t.vms).toHaveLength(1);
    expect(t.faults).toEqual([{ primitive: 'create', error: 'Capacity', times: 1, ambiguous: true }]);
    expect(t.kills).toEqual([]);
    expect(t.bootMs).toBe(0);
    expect(size(t)).toBe(2);
  });
});
