/**
 * The chaos kit's input alphabet: a trace is what the users do (start, cancel, teardown, start a
 * running name again, re-start a finished name, several names at once) and what the cloud and the
 * machines do (faults per primitive, ambiguous creates, slow boots, vanished instances, worker
 * SIGKILLs, dev-server restarts, spot preemptions: trace-spot.ts). `generate(seed)` is a pure function of the seed; `shrink`
 * proposes smaller traces. No Temporal or filesystem import: unit-tested on its own.
 */
import type { ErrorKind } from '../../src/core/errors';
import type { Stage } from '../../src/core/api';
import { addSpot, simplerSpot, spotWeight, type PreemptOp, type SpotFields } from './trace-spot';

export type { PreemptOp } from './trace-spot';

export type Level = 'fake' | 'local';
export type FaultPrimitive = 'plan' | 'prepare' | 'create' | 'observe' | 'delete' | 'cleanup';

/** One armed fault rule. Every fault is finite (`times`), so faults always stop. */
export interface FaultSpec {
  primitive: FaultPrimitive;
  error: ErrorKind;
  times: number;
  region?: string;
  instanceType?: string;
  /** create only: the instance is made, then the error is thrown. */
  ambiguous?: boolean;
}

/**
 * What happens to a VM after its start. `vanish-when-ready`: the instance is killed behind the product's back (fake: removed from the
 * cloud's store; local: its sshd SIGKILLed). `terminate…`: the workflow is terminated through
 * Temporal (the Web UI's Terminate button); the account watcher must sweep what it left.
 * `preempt-when-ready`: the cloud reclaims the spot instance (trace-spot.ts).
 */
export type VmOp =
  | { op: 'none' }
  | { op: 'cancel'; afterMs: number }
  | { op: 'teardown'; afterMs: number }
  | { op: 'teardown-when-ready' }
  | { op: 'vanish-when-ready' }
  | { op: 'terminate'; afterMs: number }
  | { op: 'terminate-when-ready' }
  | PreemptOp;

export interface VmScript extends SpotFields {
  /** Index of the VM name in the trace (names are `c<seed>-<vm>`). */
  vm: number;
  startAfterMs: number;
  op: VmOp;
  /** Start the same name again while its workflow runs (must be rejected). */
  duplicateStart: boolean;
  /** Once its workflow closed, start the same name again (a fresh launch). */
  restart: boolean;
  /** `--parallel N` of this VM (absent: 1); drawn by `addExtras`. */
  parallel?: number;
}

/** SIGKILL the worker when a VM's stage (sampled) reaches `stage`, or after the `n`-th cloud call (fake). */
export type KillPoint = { at: 'stage'; vm: number; stage: Stage } | { at: 'call'; n: number };

export interface Trace {
  seed: number;
  level: Level;
  /** Slow boot: instances stay Pending this long. */
  bootMs: number;
  faults: FaultSpec[];
  vms: VmScript[];
  kills: KillPoint[];
  /**
   * VMs of a second deployment on the same cloud, at the same time, with the names of `vms`
   * (`vm` is the index of the name they share). Absent: one deployment.
   */
  second?: VmScript[];
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0 || 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
function weighted<T>(r: Rand, xs: readonly (readonly [T, number])[]): T {
  const total = xs.reduce((s, [, w]) => s + w, 0);
  let x = r() * total;
  for (const [v, w] of xs) {
    x -= w;
    if (x < 0) return v;
  }
  return xs[xs.length - 1]![0];
}

/** Regions and instance types a trace of this level launches on (the VM spec restricts the plan to them). */
export const GEOGRAPHY: Record<Level, { regions: string[]; instanceTypes: string[] }> = {
  fake: { regions: ['fake-a', 'fake-b'], instanceTypes: ['gpu-1', 'gpu-2'] },
  local: { regions: ['local-a', 'local-b'], instanceTypes: ['cpu-small', 'cpu-large'] },
};

const KILL_STAGES: Stage[] = ['creating', 'booting', 'connecting', 'compensating', 'ready', 'tearing-down', 'leaked'];

function genFault(r: Rand, level: Level): FaultSpec {
  const geo = GEOGRAPHY[level];
  const primitive = weighted<FaultPrimitive>(r, [
    ['create', 40],
    ['prepare', 10],
    ['observe', 14],
    ['delete', 22],
    ['cleanup', 9],
    ['plan', 5],
  ]);
  let f: FaultSpec;
  switch (primitive) {
    case 'plan':
      f = { primitive, error: 'Transient', times: int(r, 1, 3) };
      break;
    case 'prepare':
      f = { primitive, error: pick(r, ['Transient', 'Capacity', 'Quota', 'Unavailable', 'Failed', 'Credentials'] as const), times: 1 };
      break;
    case 'create': {
      const ambiguous = r() < 0.35;
      const error = ambiguous
        ? pick(r, ['Transient', 'Capacity', 'Quota', 'Failed', 'Credentials'] as const)
        : pick(r, ['Transient', 'Transient', 'Capacity', 'Quota', 'Unavailable', 'Failed', 'Credentials'] as const);
      f = { primitive, error, times: error === 'Transient' ? int(r, 1, 3) : 1, ...(ambiguous ? { ambiguous } : {}) };
      break;
    }
    case 'observe':
      f = r() < 0.8 ? { primitive, error: 'Transient', times: int(r, 1, 5) } : { primitive, error: pick(r, ['Failed', 'Credentials'] as const), times: 1 };
      break;
    case 'delete':
      f = r() < 0.75 ? { primitive, error: 'Transient', times: int(r, 1, 6) } : { primitive, error: 'Failed', times: int(r, 1, 2) };
      break;
    case 'cleanup':
      f = r() < 0.6 ? { primitive, error: 'Transient', times: int(r, 1, 4) } : { primitive, error: 'Failed', times: 1 };
      break;
  }
  // Scope: anywhere, one region, or one offer (plan calls have no region).
  if (primitive !== 'plan') {
    const scope = r();
    if (scope < 0.6) f.region = pick(r, geo.regions);
    if (scope < 0.3 && (primitive === 'create' || primitive === 'prepare')) f.instanceType = pick(r, geo.instanceTypes);
  }
  return f;
}

function genOp(r: Rand): VmOp {
  const op = weighted<Exclude<VmOp['op'], 'terminate' | 'terminate-when-ready' | 'preempt-when-ready'>>(r, [
    ['none', 30],
    ['cancel', 20],
    ['teardown', 12],
    ['teardown-when-ready', 22],
    ['vanish-when-ready', 16],
  ]);
  switch (op) {
    case 'cancel':
    case 'teardown':
      return { op, afterMs: int(r, 0, 25) * 100 };
    default:
      return { op };
  }
}

/** The trace of `seed` at `level` (pure: the same seed always gives the same trace). */
export function generate(seed: number, level: Level): Trace {
  const r = rng(seed * 2654435761 + (level === 'local' ? 17 : 0));
  const vmCount =
    level === 'fake'
      ? weighted(r, [
          [1, 45],
          [2, 40],
          [3, 15],
        ] as const)
      : weighted(r, [
          [1, 60],
          [2, 40],
        ] as const);
  const vms: VmScript[] = [];
  for (let vm = 0; vm < vmCount; vm++) {
    vms.push({ vm, startAfterMs: vm === 0 ? 0 : int(r, 0, 10) * 100, op: genOp(r), duplicateStart: r() < 0.15, restart: r() < 0.15 });
  }
  const faults: FaultSpec[] = [];
  const faultCount = weighted(r, [
    [0, 12],
    [1, 30],
    [2, 30],
    [3, 18],
    [4, 10],
  ] as const);
  for (let i = 0; i < faultCount; i++) faults.push(genFault(r, level));
  const bootMs = r() < 0.6 ? 0 : int(r, 3, 30) * 100;
  const kills: KillPoint[] = [];
  // A restart re-bundles the workflows (~13 CPU-s on 2 cores): fewer kills per trace at level
  // fake, where there are hundreds of traces, than at level local.
  const killCount =
    level === 'fake'
      ? weighted(r, [
          [0, 84],
          [1, 13],
          [2, 3],
        ] as const)
      : weighted(r, [
          [0, 50],
          [1, 40],
          [2, 10],
        ] as const);
  for (let i = 0; i < killCount; i++) {
    kills.push(level === 'fake' && r() < 0.5 ? { at: 'call', n: int(r, 2, 30) } : { at: 'stage', vm: int(r, 0, vmCount - 1), stage: pick(r, KILL_STAGES) });
  }
  const second = addExtras(seed, level, vms);
  // The spot market (trace-spot.ts): a stream of its own again, level fake only.
  if (level === 'fake') addSpot(rng(seed * 69069 + 0x2545f491), vms);
  return { seed, level, bootMs, faults, vms, kills, ...(second ? { second } : {}) };
}

/**
 * Alphabet added after the first generator, drawn from a stream of its own so that every seed
 * keeps the trace it had and only gains these: `--parallel 2..4` on some starts.
 */
function addExtras(seed: number, level: Level, vms: VmScript[]): VmScript[] | undefined {
  const r = rng(seed * 40503 + (level === 'local' ? 29 : 7) + 0x5bd1e995);
  for (const v of vms) if (r() < 0.3) v.parallel = int(r, 2, 4);
  // Terminate through Temporal (never re-started: the sweep comes after the grace).
  for (const v of vms) {
    if (r() >= 0.12) continue;
    v.op = r() < 0.6 ? { op: 'terminate-when-ready' } : { op: 'terminate', afterMs: int(r, 0, 25) * 100 };
    v.restart = false;
  }
  if (r() >= 0.2) return undefined;
  const second: VmScript[] = [];
  for (const v of vms) {
    if (second.length > 0 && r() < 0.5) continue;
    const op = weighted<VmOp['op']>(r, [
      ['none', 30],
      ['teardown-when-ready', 25],
      ['vanish-when-ready', 20],
      ['terminate-when-ready', 15],
      ['cancel', 10],
    ]);
    second.push({
      vm: v.vm,
      startAfterMs: int(r, 0, 10) * 100,
      op: op === 'cancel' ? { op, afterMs: int(r, 0, 25) * 100 } : ({ op } as VmOp),
      duplicateStart: false,
      restart: false,
    });
  }
  return second;
}

/** Number of elements in a trace (the shrinker's measure). */
export function size(t: Trace): number {
  const opWeight = (v: VmScript): number =>
    (v.op.op === 'none' ? 0 : 1) +
    (v.duplicateStart ? 1 : 0) +
    (v.restart ? 1 : 0) +
    (v.startAfterMs > 0 ? 1 : 0) +
    (v.parallel !== undefined ? 1 : 0) +
    spotWeight(v);
  const second = t.second ?? [];
  return (
    t.vms.length +
    second.length +
    [...t.vms, ...second].reduce((s, v) => s + opWeight(v), 0) +
    t.faults.reduce((s, f) => s + f.times, 0) +
    t.kills.length +
    (t.bootMs > 0 ? 1 : 0)
  );
}

/**
 * Smaller variants of a failing trace, most aggressive first: drop a VM, a kill, a fault; lower a
 * fault's `times`; simplify a VM's script; drop the slow boot. The runner keeps the first
 * candidate that still fails and shrinks again (a naive greedy shrinker).
 */
export function shrinkCandidates(t: Trace): Trace[] {
  const out: Trace[] = [];
  const renumber = (vms: VmScript[]): VmScript[] => vms.map((v, i) => ({ ...v, vm: i }));
  if (t.vms.length > 1) {
    for (let i = 0; i < t.vms.length; i++) {
      const vms = renumber(t.vms.filter((_, j) => j !== i));
      const kills = t.kills.flatMap((k): KillPoint[] => (k.at === 'stage' ? (k.vm === i ? [] : [{ ...k, vm: k.vm > i ? k.vm - 1 : k.vm }]) : [k]));
      const second = t.second?.filter((v) => v.vm !== i).map((v) => ({ ...v, vm: v.vm > i ? v.vm - 1 : v.vm }));
      const { second: _second, ...rest } = t;
      out.push({ ...rest, vms, kills, ...(second?.length ? { second } : {}) });
    }
  }
  if (t.second) {
    const { second: _second, ...one } = t;
    out.push(one);
  }
  for (let i = 0; i < t.kills.length; i++) out.push({ ...t, kills: t.kills.filter((_, j) => j !== i) });
  for (let i = 0; i < t.faults.length; i++) out.push({ ...t, faults: t.faults.filter((_, j) => j !== i) });
  for (let i = 0; i < t.faults.length; i++) {
    const f = t.faults[i]!;
    if (f.times > 1) out.push({ ...t, faults: t.faults.map((g, j) => (j === i ? { ...g, times: g.times - 1 } : g)) });
  }
  for (let i = 0; i < t.vms.length; i++) {
    const v = t.vms[i]!;
    const simpler: Partial<VmScript>[] = [];
    if (v.restart) simpler.push({ restart: false });
    if (v.duplicateStart) simpler.push({ duplicateStart: false });
    if (v.op.op !== 'none') simpler.push({ op: { op: 'none' } });
    if (v.startAfterMs > 0) simpler.push({ startAfterMs: 0 });
    for (const s of simpler) out.push({ ...t, vms: t.vms.map((w, j) => (j === i ? { ...w, ...s } : w)) });
    if (v.parallel !== undefined) out.push({ ...t, vms: t.vms.map((w, j) => (j === i ? serialOf(w) : w)) });
    for (const s of simplerSpot(v)) out.push({ ...t, vms: t.vms.map((w, j) => (j === i ? s : w)) });
  }
  if (t.bootMs > 0) out.push({ ...t, bootMs: 0 });
  return out.filter((c) => size(c) < size(t));
}

function serialOf(v: VmScript): VmScript {
  const { parallel: _parallel, ...rest } = v;
  return rest;
}

/** The VM name of `vm` in a trace (distinct per seed, so traces run side by side on one server). */
export function vmName(t: Pick<Trace, 'seed'>, vm: number, tag = ''): string {
  return `c${t.seed}${tag}-${vm}`;
}

/** The evidence's key of a VM: its name, plus `/b` in the second deployment (whose names overlap the first's). */
export const vmKey = (name: string, second: boolean): string => (second ? `${name}/b` : name);

/** The script of the VM keyed `key` (see {@link vmKey}) in `t`. */
export function scriptOf(t: Pick<Trace, 'vms' | 'second'>, key: string): VmScript | undefined {
  const second = key.endsWith('/b');
  const name = second ? key.slice(0, -2) : key;
  const vm = Number(name.slice(name.lastIndexOf('-') + 1));
  return (second ? (t.second ?? []) : t.vms).find((s) => s.vm === vm);
}

/** The `--parallel N` of the VM keyed `key` in `t` (1 when absent): how many of its instances may live at once. */
export function parallelOfVm(t: Pick<Trace, 'vms' | 'second'>, key: string): number {
  return scriptOf(t, key)?.parallel ?? 1;
}
