/**
 * The scale bench (issue 29): `npm run bench:scale -- --sizes 100,1000,5000 --spread 5000x50`
 * (also `npm run bench -- --only SCALE …`). For each size, N Ready VMs in one region (each
 * `--spread VMSxPAIRS`: over that many (cloud, region) pairs) on a fresh lab with real vmWorkflows
 * and account watchers and the fake cloud (bench/scale-run.ts says what each phase measures).
 * Prints a table (markdown) with a linear extrapolation to 10,000 VMs, writes
 * bench/results/scale-latest.json and draws bench/scale.svg. `--plot a.json[,b.json]` redraws
 * the table and the plot from saved results (runs merged) without running anything.
 * Flags: `--accel K` (idle cadence ×K, default 60), `--idle-min M` (default one backstop
 * interval at ×K), `--kills 5`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { DEFAULT_TUNING } from '../src/core/tuning';
import { extrapolate, parseScaleArgs, ScaleFlagError, type ScalePlan } from './scale-model';
import { scaleRun, type RunResult } from './scale-run';
import { scaleSvg, type Panel } from './scale-svg';
import { round } from './stats';

const X_MAX = 10_000;
const TARGETS = { rssMb: 1024, eventsPerVmDay: 20, callsPerVmDay: 20, lossP95Ms: 30_000 };
const log = (s: string): void => void process.stderr.write(`[scale] ${s}\n`);

interface Saved {
  meta: Record<string, unknown>;
  runs: RunResult[];
}

type Figure = [label: string, pick: (r: RunResult) => number, target?: string];

const FIGURES: Figure[] = [
  ['launch wall, s (all started → all Ready)', (r) => r.launch.wallMs / 1000],
  ['VMs Ready when the launch wait ended', (r) => r.launch.ready],
  ['worker RSS at Ready, MB', (r) => r.rss.atReadyMb, '≤ 1,024 at 5,000'],
  ['worker RSS peak over the run, MB', (r) => r.rss.peakMb],
  ['worker CPU per launch, ms', (r) => r.launch.cpuMsPerLaunch.worker, 'flat in N'],
  ['server CPU per launch, ms', (r) => r.launch.cpuMsPerLaunch.server, 'flat in N'],
  ['idle history events per VM-day', (r) => r.idle.perVmDay.historyEvents, '≤ 20 at ≥ 1,000'],
  ['idle cloud calls per VM-day', (r) => r.idle.perVmDay.cloudCalls, '≤ 20 at ≥ 1,000'],
  ['idle CPU per VM-day, worker + server, ms', (r) => r.idle.perVmDay.cpuMs.worker + r.idle.perVmDay.cpuMs.server],
  ["watcher's largest event, KB", (r) => r.idle.watcher.largestEventBytes / 1024],
  ["watcher's longest workflow task over the run, ms", (r) => r.idle.watcher.longestTaskMs ?? NaN, '≤ 100 at 5,000'],
  ["watcher's workflow tasks during the launch, p95, ms", (r) => r.idle.watcher.tasksAtLaunch?.p95Ms ?? NaN],
  ['… max', (r) => r.idle.watcher.tasksAtLaunch?.maxMs ?? NaN],
  ["watcher's workflow tasks at N Ready (idle window), p95, ms", (r) => r.idle.watcher.tasksIdle?.p95Ms ?? NaN, '≤ 100 at 5,000'],
  ['… max', (r) => r.idle.watcher.tasksIdle?.maxMs ?? NaN],
  ["sampled VMs' workflow tasks during the launch, p95, ms", (r) => r.idle.sampledVmTasks?.atLaunch.p95Ms ?? NaN],
  ['workflow cache forced evictions during the launch', (r) => r.launch.core?.forcedEvictions ?? NaN],
  ['… during the idle window', (r) => r.idle.core?.forcedEvictions ?? NaN],
  ["watcher's mean time per task in the worker (core), idle window, ms", (r) => meanTask(r.idle.core?.byType.accountWatcherWorkflow)],
  ["ledger pages' largest event, KB", (r) => (r.idle.ledgerPages?.largestEventBytes ?? NaN) / 1024],
  ["ledger pages' longest workflow task, ms", (r) => r.idle.ledgerPages?.longestTaskMs ?? NaN],
  ['watcher history growth, KB per hour (each watcher)', (r) => r.idle.watcher.historyBytesPerHour / 1024],
  ['loss → `lost` p50, s', (r) => r.loss.p50Ms / 1000],
  ['loss → `lost` p95, s', (r) => r.loss.p95Ms / 1000, '≤ 30 at every N'],
  ['teardown of all, wall, s', (r) => r.teardown.wallMs / 1000],
  ['instances left at the cloud after teardown', (r) => r.teardown.instancesLeft, '0'],
];

const meanTask = (t: { executed: number; executedMs: number } | undefined): number => (t && t.executed > 0 ? t.executedMs / t.executed : NaN);
const fmt = (v: number): string => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : `${round(v, 1)}`) : '—');
const runLabel = (r: RunResult): string => (r.pairs === 1 ? `${r.vms.toLocaleString('en-US')}` : `${r.vms.toLocaleString('en-US')} over ${r.pairs} pairs`);

/** The markdown table: one column per run, and the one-region runs' linear extrapolation to 10,000. */
export function table(runs: readonly RunResult[]): string {
  const oneRegion = runs.filter((r) => r.pairs === 1);
  const head = ['N Ready VMs', ...runs.map(runLabel), '10,000 (linear, one region)', 'target'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const [label, pick, target] of FIGURES) {
    const ext =
      oneRegion.length > 0
        ? extrapolate(
            oneRegion.map((r) => [r.vms, pick(r)] as [number, number]),
            X_MAX,
          )
        : NaN;
    // A line falling below zero says the sizes disagree (noise or a regime change), not that the cost vanishes.
    lines.push(`| ${label} | ${runs.map((r) => fmt(pick(r))).join(' | ')} | ${ext < 0 ? '— (fit < 0)' : fmt(ext)} | ${target ?? ''} |`);
  }
  return lines.join('\n');
}

function panels(runs: readonly RunResult[]): Panel[] {
  const one = runs.filter((r) => r.pairs === 1);
  const pts = (pick: (r: RunResult) => number): [number, number][] => one.map((r) => [r.vms, pick(r)]);
  return [
    { title: 'launch wall (all at once)', unit: 's', series: [{ name: 'start → all Ready', color: '#1f77b4', points: pts((r) => r.launch.wallMs / 1000) }] },
    { title: 'worker RSS at Ready', unit: 'MB', target: TARGETS.rssMb, series: [{ name: 'RSS', color: '#1f77b4', points: pts((r) => r.rss.atReadyMb) }] },
    {
      title: 'CPU per launch',
      unit: 'ms',
      series: [
        { name: 'worker', color: '#1f77b4', points: pts((r) => r.launch.cpuMsPerLaunch.worker) },
        { name: 'server', color: '#ff7f0e', points: pts((r) => r.launch.cpuMsPerLaunch.server) },
      ],
    },
    {
      title: 'idle cost per Ready VM-day',
      unit: 'count',
      target: TARGETS.eventsPerVmDay,
      series: [
        { name: 'history events', color: '#1f77b4', points: pts((r) => r.idle.perVmDay.historyEvents) },
        { name: 'cloud calls', color: '#ff7f0e', points: pts((r) => r.idle.perVmDay.cloudCalls) },
      ],
    },
    {
      title: "watcher's largest event",
      unit: 'KB',
      series: [{ name: 'largest event', color: '#1f77b4', points: pts((r) => r.idle.watcher.largestEventBytes / 1024) }],
    },
    { title: 'loss → lost', unit: 's', target: TARGETS.lossP95Ms / 1000, series: [{ name: 'p95', color: '#1f77b4', points: pts((r) => r.loss.p95Ms / 1000) }] },
  ];
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
}

function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
}

function report(saved: Saved, svgFile: string): void {
  const caption = `gpuprov scale bench, ${String(saved.meta.date)}, commit ${String(saved.meta.gitCommit)}, load ${String(saved.meta.loadBefore)}: dots measured, dashed the linear fit to ${X_MAX.toLocaleString('en-US')}, red the target`;
  writeFileSync(svgFile, scaleSvg(panels(saved.runs), { xMax: X_MAX, caption }));
  process.stdout.write(`\n${table(saved.runs)}\n\nwrote ${svgFile}\n`);
}

async function run(plan: ScalePlan): Promise<void> {
  const started = Date.now();
  const meta: Record<string, unknown> = {
    date: new Date().toISOString(),
    // The heap flag is not in argv: its size is read back from V8 (heapLimitMb below).
    command: `npx tsx bench/scale.ts ${process.argv.slice(2).join(' ')}`,
    gitCommit: gitCommit(),
    node: process.version,
    nproc: cpus().length,
    heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
    loadBefore: loadAverage(),
    plan,
  };
  const runs: RunResult[] = [];
  const all = [...plan.sizes.map((vms) => ({ vms, pairs: 1 })), ...plan.spread];
  for (const s of all) {
    log(`run: ${s.vms} VMs over ${s.pairs} pair(s), load ${loadAverage()}`);
    runs.push(await scaleRun({ ...s, accel: plan.accel, idleMs: plan.idleMs, kills: plan.kills, log }));
    log(JSON.stringify(runs.at(-1)));
  }
  meta.loadAfter = loadAverage();
  meta.durationS = Math.round((Date.now() - started) / 1000);
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'scale-latest.json'), `${JSON.stringify({ meta, runs }, null, 2)}\n`);
  report({ meta, runs }, join(__dirname, 'scale.svg'));
  process.stdout.write(`wrote bench/results/scale-latest.json (${meta.durationS as number} s)\n`);
}

function plotOnly(files: string): void {
  const saved = files.split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')) as Saved);
  const runs = saved.flatMap((s) => s.runs).sort((a, b) => a.pairs - b.pairs || a.vms - b.vms);
  report({ meta: saved[0]!.meta, runs }, join(__dirname, 'scale.svg'));
}

export async function main(argv: string[]): Promise<void> {
  const plotArg = argv.indexOf('--plot');
  if (plotArg >= 0) return plotOnly(argv[plotArg + 1] ?? 'bench/results/scale-latest.json');
  let plan: ScalePlan;
  try {
    plan = parseScaleArgs(argv, DEFAULT_TUNING.healthIntervalMs);
  } catch (err) {
    if (!(err instanceof ScaleFlagError)) throw err;
    process.stderr.write(`scale bench: ${err.message}\n`);
    process.exit(2);
  }
  await run(plan);
}

if (require.main === module)
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`scale bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
