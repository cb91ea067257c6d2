/**
 * The chaos kit: runs traces of one level on lanes side by side against a dev server of its own
 * (restarted on the same SQLite file mid-run when asked), replays every history, shrinks a failing
 * trace, and sums it up. Used by `run.ts` (the `npm run chaos` CLI) and `chaos.test.ts`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { freePort } from '../../src/ports';
import { startDevServer, type DevServer } from '../../src/server/dev-server';
import { obtainTemporalCli } from '../../src/server/temporal-cli';
import { FakeChaosCloud, LocalChaosCloud } from './cloud';
import { Lane, type KitContext } from './lane';
import { runTrace, type TraceOutcome } from './trace-run';
import { INVARIANTS, type Violation } from './oracle';
import { generate, shrinkCandidates, size, type Level, type Trace } from './trace';

export interface KitOptions {
  level: Level;
  /** Seeds to run (traces are generated from them) … */
  seeds?: number[];
  /** … or explicit traces (e.g. a shrunk one printed by an earlier run). */
  traces?: Trace[];
  /** Concurrent lanes (one worker process each). */
  lanes: number;
  /** Dev-server restarts spread over the run (the `server` variant). */
  serverRestarts: number;
  /** Run the deliberately broken build (compensation skipped: broken-build.ts). */
  broken?: boolean;
  /** Shrink the first failing trace (default true). */
  shrink?: boolean;
  /** At most this many shrink rounds (each runs up to `lanes` candidates side by side). */
  shrinkRounds?: number;
  cliPath?: string;
  log?: (line: string) => void;
}

export interface Failure {
  seed: number;
  violations: Violation[];
  trace: Trace;
  shrunk?: Trace;
  shrunkViolations?: Violation[];
  /** The command that replays it. */
  replay: string;
}

/** One violation in the summary: its seed, invariant, a one-line detail and the replay command. */
export interface FailureLine {
  seed: number;
  invariant: string;
  detail: string;
  replay: string;
}

/** The one JSON line the runner prints (plus the failures, printed separately). */
export interface KitSummary {
  level: Level;
  seeds: number;
  invariants: number;
  violations: number;
  leaks: number;
  /** Instances (of terminated workflows) not swept within the orphan grace + one watcher cycle. */
  orphansLeft: number;
  /** Instances one install deleted at the cloud although another install owned them. */
  foreignDeletions: number;
  /** One line per violation: what broke, and the command that replays it. */
  failures: FailureLine[];
  /** The slowest and the median loss detection (vanish → lost), ms, over every vanished VM. */
  lostMaxMs: number;
  lostP50Ms: number;
  /** Spot preemptions played (fake level), those with a notice, and what became of the preempted VMs: Ready again, ended lost, relaunch failed. */
  preemptions: number;
  preemptionsWithNotice: number;
  preemptedReadyAgain: number;
  preemptedLost: number;
  preemptedRelaunchFailed: number;
  duplicates: number;
  kills: number;
  restarts: number;
  serverRestarts: number;
  wallMs: number;
}

export interface KitReport {
  summary: KitSummary;
  failures: Failure[];
  outcomes: TraceOutcome[];
}

const WORKFLOWS = path.join(__dirname, '..', '..', 'src', 'workflows', 'index.ts');
const BROKEN_BUILD = path.join(__dirname, 'broken-build.ts');

/** gpuprov's workflows with the broken build's interceptor, bundled once per run into `dir`. */
async function brokenBundle(dir: string, log: (line: string) => void): Promise<string> {
  log('bundling the broken build (workflows + broken-build.ts)');
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS, workflowInterceptorModules: [BROKEN_BUILD], logger: new DefaultLogger('WARN') });
  const file = path.join(dir, 'broken-workflows.js');
  fs.writeFileSync(file, code);
  return file;
}

class ChaosServer {
  restarts = 0;
  private restarting?: Promise<void>;
  private constructor(
    private server: DevServer,
    private readonly opts: Parameters<typeof startDevServer>[0],
  ) {}

  static async start(cliPath: string, dir: string, name = 'temporal'): Promise<ChaosServer> {
    const opts = { cliPath, port: await freePort(), headless: true, dbFile: path.join(dir, `${name}.db`), logFile: path.join(dir, `${name}.log`) };
    return new ChaosServer(await startDevServer(opts), opts);
  }

  get address(): string {
    return this.server.address;
  }

  /** Stop the server and start it again on the same port and SQLite file. */
  restart(): Promise<void> {
    this.restarting ??= (async () => {
      await this.server.stop();
      this.server = await startDevServer(this.opts);
      this.restarts += 1;
    })().finally(() => (this.restarting = undefined));
    return this.restarting;
  }

  async stop(): Promise<void> {
    await this.restarting?.catch(() => undefined);
    await this.server.stop();
  }
}

export async function runKit(o: KitOptions): Promise<KitReport> {
  const t0 = Date.now();
  const log = o.log ?? (() => undefined);
  const traces = o.traces ?? (o.seeds ?? []).map((s) => generate(s, o.level));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gpuprov-chaos-${o.level}-`));
  const cliPath = o.cliPath ?? (await obtainTemporalCli()).path;
  // Two independent installs per lane share its cloud: each has a server (and namespace) of its own.
  const [server, secondServer] = await Promise.all([ChaosServer.start(cliPath, dir), ChaosServer.start(cliPath, dir, 'temporal-b')]);
  const servers = [server, secondServer];
  // The lanes' workers (and the replay) run this bundle instead of gpuprov's own.
  const bundle = o.broken ? await brokenBundle(dir, log) : undefined;
  const contextOf = async (s: ChaosServer, namespace: string): Promise<KitContext> => {
    const connection = await Connection.connect({ address: s.address });
    return {
      client: new Client({ connection, namespace }),
      connection,
      address: s.address,
      namespace,
      serverRestarts: () => s.restarts,
      workerEnv: bundle ? { GPUPROV_WORKFLOW_BUNDLE: bundle } : {},
      log,
    };
  };
  const kit = await contextOf(server, 'default');
  const secondKit = await contextOf(secondServer, 'default');
  const runTag = randomUUID().slice(0, 6);
  const laneCount = Math.max(1, Math.min(o.lanes, traces.length));
  const lanes: Lane[] = [];
  try {
    for (let i = 0; i < laneCount; i++) {
      const laneDir = path.join(dir, `lane-${i}`);
      fs.mkdirSync(laneDir, { recursive: true });
      lanes.push(new Lane(i, o.level === 'fake' ? new FakeChaosCloud(laneDir) : new LocalChaosCloud(laneDir), kit, secondKit, runTag));
    }
    // Two at a time: worker start-ups are CPU-heavy on 2 cores.
    for (let i = 0; i < lanes.length; i += 2) await Promise.all(lanes.slice(i, i + 2).map((l) => l.start()));
    log(`${lanes.length} lanes up after ${Date.now() - t0} ms; servers ${server.address} and ${secondServer.address}`);

    // Server restarts at evenly spaced points of the run, while other traces are in flight.
    const restartAt = Array.from({ length: o.serverRestarts }, (_, i) => Math.max(1, Math.round(((i + 1) * traces.length) / (o.serverRestarts + 1))));
    let finished = 0;
    const onFinished = (): void => {
      finished += 1;
      if (restartAt[0] !== undefined && finished >= restartAt[0]) {
        restartAt.shift();
        log(`restarting both dev servers (after ${finished} traces)`);
        for (const s of servers) void s.restart().catch((err: unknown) => log(`server restart failed: ${String(err)}`));
      }
    };

    const outcomes = await runOnLanes(
      lanes,
      traces.map((t) => ({ trace: t, tag: '' })),
      (out) => {
        onFinished();
        log(`seed ${out.trace.seed}: ${out.violations.length} violation(s), ${out.kills} kill(s), ${out.ms} ms (lane ${out.lane})`);
        for (const x of out.violations.slice(0, 5)) log(`  seed ${out.trace.seed}: [${x.invariant}] ${x.vm ?? ''} ${x.detail}`);
      },
    );

    // Every history replays with the workflow code that ran it (one bundle for all).
    const replayErrors = await replayAll(outcomes, bundle);
    for (const out of outcomes) {
      for (const r of out.runs) {
        const err = replayErrors.get(r.runId);
        if (err) out.violations.push({ invariant: 'histories-replay', vm: r.vm, detail: `${r.runId.slice(-8)}: ${err}` });
      }
    }

    const failing = outcomes.filter((x) => x.violations.length > 0);
    const failures: Failure[] = failing.map((x) => ({ seed: x.trace.seed, violations: x.violations, trace: x.trace, replay: replayCommand(o, x.trace) }));
    if ((o.shrink ?? true) && failures[0]) {
      const f = failures[0];
      const shrunk = await shrink(lanes, f.trace, f.violations, o.shrinkRounds ?? 8, log);
      f.shrunk = shrunk.trace;
      f.shrunkViolations = shrunk.violations;
      f.replay = replayCommand(o, shrunk.trace);
    }
    const restarts = lanes.reduce((s, l) => s + l.restarts, 0) + server.restarts;
    const lost = outcomes.flatMap((x) => x.lostMs).sort((a, b) => a - b);
    const summary: KitSummary = {
      level: o.level,
      seeds: traces.length,
      invariants: INVARIANTS.length,
      violations: outcomes.reduce((s, x) => s + x.violations.length, 0),
      leaks: outcomes.reduce((s, x) => s + x.leaks, 0),
      orphansLeft: outcomes.reduce((s, x) => s + x.orphansLeft, 0),
      foreignDeletions: outcomes.reduce((s, x) => s + x.foreignDeletions, 0),
      failures: failures.flatMap((f) =>
        f.violations.map((x) => ({
          seed: f.seed,
          invariant: x.invariant,
          detail: `${x.vm ? `${x.vm}: ` : ''}${x.detail}`.slice(0, 240),
          replay: `npm run chaos -- --level ${o.level} --seed ${f.seed}${o.broken ? ' --broken' : ''}`,
        })),
      ),
      lostMaxMs: Math.max(0, ...lost),
      lostP50Ms: lost[Math.floor(lost.length / 2)] ?? 0,
      preemptions: outcomes.reduce((s, x) => s + x.preemptions.played, 0),
      preemptionsWithNotice: outcomes.reduce((s, x) => s + x.preemptions.withNotice, 0),
      preemptedReadyAgain: outcomes.reduce((s, x) => s + x.preemptions.readyAgain, 0),
      preemptedLost: outcomes.reduce((s, x) => s + x.preemptions.lost, 0),
      preemptedRelaunchFailed: outcomes.reduce((s, x) => s + x.preemptions.relaunchFailed, 0),
      duplicates: outcomes.reduce((s, x) => s + x.duplicates, 0),
      kills: lanes.reduce((s, l) => s + l.kills, 0),
      restarts,
      serverRestarts: server.restarts,
      wallMs: Date.now() - t0,
    };
    return { summary, failures, outcomes };
  } finally {
    await Promise.all(lanes.map((l) => l.stop().catch(() => undefined)));
    for (const l of lanes) l.cloud.sweep();
    for (const k of [kit, secondKit]) await k.connection.close().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs jobs on free lanes (one trace per lane at a time), in job order. */
async function runOnLanes(lanes: Lane[], jobs: { trace: Trace; tag: string }[], done?: (o: TraceOutcome) => void): Promise<TraceOutcome[]> {
  const out: TraceOutcome[] = new Array<TraceOutcome>(jobs.length);
  let next = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      for (;;) {
        const i = next++;
        const job = jobs[i];
        if (!job) return;
        out[i] = await runTrace(lane, job.trace, job.tag);
        done?.(out[i]);
      }
    }),
  );
  return out;
}

async function replayAll(outcomes: TraceOutcome[], bundle: string | undefined): Promise<Map<string, string>> {
  const histories = outcomes.flatMap((x) => x.runs.filter((r) => r.history).map((r) => ({ workflowId: r.runId, history: r.history! })));
  const errors = new Map<string, string>();
  if (histories.length === 0) return errors;
  for await (const r of Worker.runReplayHistories(bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: WORKFLOWS }, histories)) {
    if (r.error) errors.set(r.workflowId, r.error instanceof Error ? r.error.message : String(r.error));
  }
  return errors;
}

let shrinkTag = 0;

/**
 * Greedy shrink: run the smaller candidates of the current trace side by side; keep the first (in
 * candidate order) that still violates an invariant; repeat until none does or rounds run out.
 */
async function shrink(
  lanes: Lane[],
  trace: Trace,
  found: Violation[],
  rounds: number,
  log: (l: string) => void,
): Promise<{ trace: Trace; violations: Violation[] }> {
  let best = trace;
  let violations = found;
  for (let round = 0; round < rounds; round++) {
    const candidates = shrinkCandidates(best).slice(0, Math.max(lanes.length, 4));
    if (candidates.length === 0) break;
    const outs = await runOnLanes(
      lanes,
      candidates.map((c) => ({ trace: c, tag: `s${++shrinkTag}` })),
    );
    const hit = outs.find((x) => x.violations.length > 0);
    log(`shrink round ${round + 1}: ${candidates.length} candidates, ${hit ? `kept one of size ${size(hit.trace)}` : 'none fails'}`);
    if (!hit) break;
    best = hit.trace;
    violations = hit.violations;
  }
  return { trace: best, violations };
}

function replayCommand(o: KitOptions, t: Trace): string {
  const broken = o.broken ? ' --broken' : '';
  const generated = generate(t.seed, t.level);
  if (JSON.stringify(generated) === JSON.stringify(t)) return `npm run chaos -- --level ${t.level} --seed ${t.seed}${broken}`;
  return `npm run chaos -- --level ${t.level}${broken} --trace '${JSON.stringify(t)}'`;
}
