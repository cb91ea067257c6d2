/**
 * The bench's own world: a Temporal dev server on free ports, one in-process worker with
 * gpuprov's workflows and activities, the local cloud (real sshd) and FakeProviders under
 * several names (one per metric, each with its own capabilities).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, type ActivityInterceptorsFactory } from '@temporalio/worker';
import { createActivities, type Activities, type AwaitRunningInput } from '../src/activities';
import { createWatcherActivities } from '../src/activities/watcher';
import { loadOrCreateSshIdentity, type SshIdentity } from '../src/ssh';
import { sshProber, type SshProber } from '../src/ssh';
import { FAILURE_TYPES } from '../src/core/failures';
import { LocalProvider, liveSshdPids } from '../src/providers/local';
import { ProviderRegistry } from '../src/providers/registry';
import type { Capabilities, CloudProvider } from '../src/core/provider';
import type { WatcherTuning } from '../src/core/watcher-api';
import { freePort } from '../src/ports';
import { startDevServer, type DevServer } from '../src/server/dev-server';
import { obtainTemporalCli } from '../src/server/temporal-cli';
import { buildWorker, runInBackground } from '../src/worker';
import type { WorkerGroup } from '../src/worker-group';
import { FakeProvider, type FakeSpot } from '../test/harness/fake-provider';
import { findClusterBinaries } from '../test/cluster/binaries';
import { startCluster } from '../test/cluster/harness';

/**
 * How a cloud's boot wait is scheduled. `boot-aware`: what ships (`bootPollDelayMs` as the NotReady
 * failure's nextRetryDelay, looks due within 2 s taken inside the attempt). Compared with it, one
 * look per activity attempt: `backoff`, the retry policy of `bootPolling` alone (fast first, then
 * backing off: what shipped first); `fixed`, a look every poll interval.
 */
export type BootSchedule = 'backoff' | 'fixed' | 'boot-aware';

export interface Lab {
  client: Client;
  taskQueue: string;
  ssh: SshIdentity;
  local: LocalProvider;
  localRoot: string;
  fakes: Map<string, FakeProvider>;
  /** Every activity execution the worker started (each attempt), with its task queue. */
  activityStarts: ActivityStart[];
  cliVersion: string;
  worker: WorkerGroup;
  /** Where the SDK core's metrics are served, with `metrics: true`. */
  metricsAddress?: string;
  /** CPU seconds (user+sys) used so far by the dev server process. */
  serverCpuS(): number;
  /** A FakeProvider registered under `name` (must be declared at setup). */
  fake(name: string): FakeProvider;
  close(): Promise<void>;
}

export interface ActivityStart {
  taskQueue: string;
  activityType: string;
  atMs: number;
}

export interface FakeDecl {
  name: string;
  caps?: Partial<Capabilities>;
  schedule?: BootSchedule;
  /** The fake sells spot (spot twins of its offers). */
  spot?: FakeSpot;
}

/** utime + stime of a process from /proc (Linux), in seconds; NaN elsewhere. */
export function procCpuS(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** NotReady with an explicit next delay (overrides the retry policy's backoff). */
/** NotReady after `delayMs`, or after the retry policy's own backoff when undefined. */
function notReadyAfter(message: string, delayMs: number | undefined): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.NotReady,
    message,
    nonRetryable: false,
    ...(delayMs === undefined ? {} : { nextRetryDelay: delayMs }),
  });
}

/** The server the lab runs on: its address, its process ids (for CPU), and how to stop it. */
interface LabServer {
  address: string;
  pids(): number[];
  stop(): Promise<void>;
}

async function devServer(cliPath: string, dir: string, log: (s: string) => void, partitions?: number): Promise<LabServer> {
  const port = await freePort();
  log(`starting dev server on 127.0.0.1:${port}`);
  const server: DevServer = await startDevServer({
    cliPath,
    port,
    headless: true,
    dbFile: join(dir, 'temporal.db'),
    namespace: 'default',
    logFile: join(dir, 'server.log'),
    ...(partitions ? { dynamicConfig: [`matching.numTaskqueueReadPartitions=${partitions}`, `matching.numTaskqueueWritePartitions=${partitions}`] } : {}),
  });
  return { address: server.address, pids: () => [server.pid], stop: () => server.stop() };
}

async function clusterServer(cliPath: string, log: (s: string) => void): Promise<LabServer> {
  const found = findClusterBinaries();
  if (!found.ok) throw new Error(`--cluster: ${found.missing} (${found.install})`);
  log('starting Temporal on PostgreSQL (frontend, history, matching, worker)');
  const cluster = await startCluster({ bins: found.bins, temporalCli: cliPath });
  return { address: cluster.address, pids: () => cluster.pids(), stop: () => cluster.stop() };
}

export async function startLab(o: {
  fakes: FakeDecl[];
  extraProviders?: CloudProvider[];
  scheduleDelay: (s: BootSchedule, caps: Capabilities, elapsedMs: number) => number | undefined;
  /** Activities per second on these clouds' task queues (others: none, as for unknown clouds). */
  rateLimits?: Record<string, number>;
  /** Run on Temporal on PostgreSQL as four processes (test/cluster/harness.ts) instead of the dev server. */
  cluster?: boolean;
  /** Timings of the account watchers the worker starts (default: the shipped ones). */
  watcher?: Partial<WatcherTuning>;
  /** The Temporal client the watcher's activities list owners with (P9's synthetic visibility); default: the activity's own. */
  watcherClient?: () => Client;
  /** Task-queue partitions of the dev server (its default: 4). */
  partitions?: number;
  /** Serve the SDK core's worker metrics on a free 127.0.0.1 port (`Lab.metricsAddress`, bench/core-metrics.ts). */
  metrics?: boolean;
  log: (s: string) => void;
}): Promise<Lab> {
  const metricsAddress = o.metrics ? `127.0.0.1:${await freePort()}` : undefined;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } } : {}),
  });
  const dir = mkdtempSync(join(tmpdir(), 'gpuprov-bench-'));
  const cli = await obtainTemporalCli({ log: o.log });
  const server = o.cluster ? await clusterServer(cli.path, o.log) : await devServer(cli.path, dir, o.log, o.partitions);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: 'default' });
  const native = await NativeConnection.connect({ address: server.address });

  const localRoot = join(dir, 'local-cloud');
  const local = new LocalProvider({ root: localRoot });
  const fakes = new Map<string, FakeProvider>();
  const schedules = new Map<string, BootSchedule>();
  for (const f of o.fakes) {
    const fake = new FakeProvider({ name: f.name, ...(f.spot ? { spot: f.spot } : {}) });
    fake.caps = { ...fake.caps, ...f.caps };
    fakes.set(f.name, fake);
    if (f.schedule) schedules.set(f.name, f.schedule);
  }
  const ssh = await loadOrCreateSshIdentity(join(dir, 'keys'));
  const fakeProbers = [...fakes.values()].map((f) => f.prober());
  // Fake instances answer as user `fake` (no sshd behind them); everything else is a real sshd.
  const prober: SshProber = async (target, identity, timeoutMs) => {
    if (target.user !== 'fake') return sshProber(target, identity, timeoutMs);
    let last: unknown;
    for (const p of fakeProbers) {
      try {
        return await p(target, identity, timeoutMs);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  };
  // Paced like a worker's registry (src/providers/pacer.ts): the rate-limited clouds' calls at most their rate in this process.
  const registry = new ProviderRegistry([local, ...fakes.values(), ...(o.extraProviders ?? [])], { perSecond: (cloud) => o.rateLimits?.[cloud] });
  const base = createActivities({ registry, ssh, owner: 'default', prober, ...(o.watcher ? { watcher: o.watcher } : {}) });
  // The compared schedules (`fixed`, `backoff`) decide every look themselves: one look per attempt.
  const oneLook = createActivities({ registry, ssh, owner: 'default', prober, inlineWindowMs: 0 });
  const activities: Activities = {
    ...base,
    ...(o.watcherClient ? createWatcherActivities({ registry, owner: 'default', client: o.watcherClient, ...(o.watcher ? { watcher: o.watcher } : {}) }) : {}),
    async awaitRunning(input: AwaitRunningInput) {
      const schedule = schedules.get(input.at.cloud);
      if (schedule !== 'fixed' && schedule !== 'backoff') return base.awaitRunning(input);
      try {
        return await oneLook.awaitRunning(input);
      } catch (err) {
        const fake = fakes.get(input.at.cloud);
        if (!fake || !(err instanceof ApplicationFailure) || err.type !== FAILURE_TYPES.NotReady) throw err;
        const delay = o.scheduleDelay(schedule, fake.caps, Date.now() - input.createdAtMs);
        throw notReadyAfter(err.message, delay);
      }
    },
  };
  const taskQueue = `bench-${randomUUID()}`;
  // buildWorker's default workflows: the prebuilt bundle (built in a child process on a cache miss), no webpack here.
  o.log('starting the worker');
  const activityStarts: ActivityStart[] = [];
  const counting: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      execute: (input, next) => {
        activityStarts.push({ taskQueue: ctx.info.taskQueue, activityType: ctx.info.activityType, atMs: Date.now() });
        return next(input);
      },
    },
  });
  const worker = await buildWorker({
    connection: native,
    namespace: 'default',
    taskQueue,
    activities,
    interceptors: { activity: [counting] },
    ...(o.rateLimits ? { rateLimits: o.rateLimits } : {}),
    log: o.log,
  });
  const running = await runInBackground(worker);
  running.done.catch((err: unknown) => o.log(`worker stopped: ${String(err)}`));

  return {
    client,
    taskQueue,
    ssh,
    local,
    localRoot,
    fakes,
    activityStarts,
    cliVersion: o.cluster ? `temporal-server on PostgreSQL (4 processes); CLI ${cli.version}` : cli.version,
    worker,
    ...(metricsAddress ? { metricsAddress } : {}),
    serverCpuS: () => server.pids().reduce((a, pid) => a + procCpuS(pid), 0),
    fake: (name) => {
      const f = fakes.get(name);
      if (!f) throw new Error(`bench: no fake cloud ${name}`);
      return f;
    },
    close: async () => {
      await running.stop().catch(() => undefined);
      await native.close();
      await connection.close();
      await server.stop();
      // Every launch tears down; an sshd left behind means a run failed half-way: stop it (ours, by pid).
      const left = liveSshdPids(localRoot);
      if (left.length > 0) o.log(`stopping ${left.length} local-cloud sshd left behind`);
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
