/**
 * The scale bench's arithmetic (bench/scale.ts), kept pure so it is unit-tested
 * (test/unit/bench/scale-model.test.ts): its flags, the accelerated idle window's figures scaled
 * to one VM-day at the shipped cadence, and the linear fit that extrapolates a figure to 10,000 VMs.
 *
 * Acceleration: during the idle window every timing of the watcher (`WatcherTuning`'s intervals,
 * windows and timeouts) and each VM's backstop health interval are divided by `accel`, so one
 * real minute is `accel` minutes of the shipped cadence; a count over the window becomes a count
 * per VM-day as count × day / (window × accel) / VMs.
 */
import type { WatcherTuning } from '../src/core/watcher-api';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/**
 * The accelerated watcher's heartbeat timeout at least: a look at 5,000 VMs (owners listed from
 * visibility, the inventory) took over 1.5 s (3 min / 120) with no beat inside it, so every
 * watchCycle timed out and the idle window measured retries.
 */
export const LOOK_HEARTBEAT_FLOOR_MS = 30_000;

/** The watcher's timings divided by `accel` (counts, like `keepSweeps`, stay); at least 1 ms each, the heartbeat timeout at least LOOK_HEARTBEAT_FLOOR_MS. */
export function acceleratedWatcher(t: WatcherTuning, accel: number): WatcherTuning {
  const div = (ms: number): number => Math.max(1, Math.round(ms / accel));
  return {
    ...t,
    fastIntervalMs: div(t.fastIntervalMs),
    readyIntervalMs: div(t.readyIntervalMs),
    slowIntervalMs: div(t.slowIntervalMs),
    orphanGraceMs: div(t.orphanGraceMs),
    quietWindowMs: div(t.quietWindowMs),
    // Not below LOOK_HEARTBEAT_FLOOR_MS: one look (owners and inventory) takes as long at any acceleration.
    heartbeatTimeoutMs: Math.max(LOOK_HEARTBEAT_FLOOR_MS, div(t.heartbeatTimeoutMs)),
    ledgerKeepMs: div(t.ledgerKeepMs),
  };
}

/** A count over a real window of `windowMs` at acceleration `accel`, per VM per shipped day. */
export function perVmDay(count: number, windowMs: number, accel: number, vms: number): number {
  if (windowMs <= 0 || accel <= 0 || vms <= 0) return NaN;
  return (count * DAY_MS) / (windowMs * accel) / vms;
}

/** A count (or bytes) over a real window at acceleration `accel`, per shipped hour. */
export function perShippedHour(count: number, windowMs: number, accel: number): number {
  if (windowMs <= 0 || accel <= 0) return NaN;
  return (count * HOUR_MS) / (windowMs * accel);
}

export interface Fit {
  slope: number;
  intercept: number;
}

/** Least-squares line through the points; NaN (no line) with fewer than two distinct N. */
export function linearFit(points: readonly (readonly [number, number])[]): Fit {
  const ps = points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const n = ps.length;
  const mx = ps.reduce((a, [x]) => a + x, 0) / n;
  const my = ps.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = ps.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  if (n < 2 || sxx === 0) return { slope: NaN, intercept: NaN };
  const slope = ps.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx;
  return { slope, intercept: my - slope * mx };
}

export const valueAt = (f: Fit, x: number): number => f.intercept + f.slope * x;

/** The value of the least-squares line through `points` at `x` (the table's 10,000-VM column). */
export function extrapolate(points: readonly (readonly [number, number])[], x: number): number {
  return valueAt(linearFit(points), x);
}

const REGIONS_PER_CLOUD = 10;

/** (cloud, region) pairs: `scale` alone for one pair, else clouds `scale0…` of ten regions each. */
export function pairsOf(n: number): { cloud: string; region: string }[] {
  return Array.from({ length: n }, (_, p) => ({ cloud: n === 1 ? 'scale' : `scale${Math.floor(p / REGIONS_PER_CLOUD)}`, region: `r${p % REGIONS_PER_CLOUD}` }));
}

export interface ScalePlan {
  /** One-region runs: N Ready VMs each. */
  sizes: number[];
  /** Spread runs: N VMs over `pairs` (cloud, region) pairs of one deployment. */
  spread: { vms: number; pairs: number }[];
  accel: number;
  /** The idle window, real ms (default: one backstop health interval at the acceleration). */
  idleMs: number;
  kills: number;
}

/** Bad input: the flag and the fix (the caller exits 2 with it, nothing started). */
export class ScaleFlagError extends Error {}

const positiveInt = (flag: string, s: string): number => {
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) throw new ScaleFlagError(`${flag}: '${s}' is not a positive whole number (e.g. ${flag} 100,1000)`);
  return n;
};

/**
 * `--sizes 100,1000 --spread 5000x50 --accel 60 --idle-min 6 --kills 5`. Defaults: sizes 100,1000,
 * no spread, accel 60, the idle window one backstop interval (`healthIntervalMs / accel`), 5 kills.
 */
export function parseScaleArgs(argv: readonly string[], healthIntervalMs: number): ScalePlan {
  const arg = (k: string): string | undefined => {
    const i = argv.indexOf(k);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new ScaleFlagError(`${k} needs a value (e.g. ${k} ${k === '--spread' ? '5000x50' : '100'})`);
    return v;
  };
  const sizesArg = arg('--sizes');
  const spreadArg = arg('--spread');
  const sizes = sizesArg !== undefined ? sizesArg.split(',').map((s) => positiveInt('--sizes', s)) : spreadArg !== undefined ? [] : [100, 1000];
  const spread = (spreadArg ?? '')
    .split(',')
    .filter((s) => s !== '')
    .map((s) => {
      const m = /^(\d+)x(\d+)$/.exec(s);
      if (!m) throw new ScaleFlagError(`--spread: '${s}' is not VMSxPAIRS (e.g. --spread 5000x50)`);
      const vms = positiveInt('--spread', m[1]!);
      const pairs = positiveInt('--spread', m[2]!);
      if (pairs > vms) throw new ScaleFlagError(`--spread: ${pairs} pairs for ${vms} VMs leaves pairs empty (give at most as many pairs as VMs)`);
      return { vms, pairs };
    });
  const accel = positiveInt('--accel', arg('--accel') ?? '60');
  const idleArg = arg('--idle-min');
  const idleMin = idleArg === undefined ? healthIntervalMs / accel / 60_000 : Number(idleArg);
  if (!(idleMin > 0)) throw new ScaleFlagError(`--idle-min: '${idleArg}' is not a positive number of minutes (e.g. --idle-min 6)`);
  const kills = positiveInt('--kills', arg('--kills') ?? '5');
  const smallest = Math.min(...sizes, ...spread.map((s) => s.vms));
  if (kills > smallest) throw new ScaleFlagError(`--kills: ${kills} is more than the smallest size (${smallest}); give fewer kills or larger --sizes`);
  return { sizes, spread, accel, idleMs: Math.round(idleMin * 60_000), kills };
}
