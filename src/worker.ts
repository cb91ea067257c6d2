/**
 * The gpuprov worker: the one place where connection, activities, workflows and interceptors are
 * wired (`buildWorker`). The worker process (`npm run worker`, the embedded default's daemon), the
 * test harnesses (in-process and spawned workers) and the bench all build their worker here.
 * Run directly it connects through @temporalio/envconfig (temporal.toml profile, TEMPORAL_*
 * variables) or to the embedded server whose address the daemon passes in GPUPROV_EMBEDDED_ADDRESS.
 * Worker processes run with WORKER_NODE_FLAGS (src/server/daemons.ts: a 512 MB heap limit).
 * Telemetry (src/telemetry): JSON log lines, gpuprov_* metrics beside the SDK's, OTLP traces.
 * Connecting and running until a signal are in ./worker-process.ts.
 */
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import type { NativeConnection, WorkerDeploymentOptions } from '@temporalio/worker';
import { Worker, type WorkerInterceptors } from '@temporalio/worker';
import type { ActivityDeps } from './activities';
import { servedClouds } from './activities/served-clouds';
import { stateDir } from './paths';
import { defaultInterceptorModules, prebuiltWorkflowBundle, workflowBundlePath } from './server/workflow-bundle';
import { activityLogAttributes, installWorkerTelemetry, otelWorkflowInterceptorModule, workerLogger, type WorkerTracing } from './telemetry';
import { TASK_QUEUE } from './core/api';
import { InputError } from './core/errors';
import { ROTATE_KEY_VAR } from './core/deployment-record';
import { gatedTypes, gateSettings, REPLAY_GATE_EXIT } from './core/replay-gate';
import { cloudTaskQueue, rateLimitFor } from './core/rate-limits';
import { WorkerGroup } from './worker-group';
import { codecOption } from './codec';
import { connectWorker, runUntilSignal, taskQueueFromEnv, type WorkerConnection } from './worker-process';
import { parseDuration } from './client/flag-values';
import { replayGate, reportRefusal } from './server/replay-gate';
import { versioningSetting } from './core/versioning';
import { workerVersioning } from './server/worker-versioning';

/**
 * Where the workflow code comes from. Default: gpuprov's prebuilt bundle (`defaultWorkflowBundle()`:
 * the package's own, or built once per source change in a child process: no webpack in the worker's heap).
 */
export type WorkflowSource =
  /** A bundle file (`bundleWorkflowCode` output), possibly still being built. */
  | { bundlePath: string | Promise<string> }
  /** A workflows module bundled by webpack in this process (tests with workflows of their own). */
  | { workflowsPath: string };

/** The activities: given implementations (tests, the bench), or the deps `createActivities` takes. */
export type ActivitySource =
  | { activities: object; deps?: never }
  /** `owner` (the deployment) defaults to the namespace; give the one the registry's adapters were built with. */
  | { deps: Omit<ActivityDeps, 'owner'> & { owner?: string }; activities?: never };

export type BuildWorkerOptions = ActivitySource & {
  connection: NativeConnection;
  namespace: string;
  /** Default: TASK_QUEUE (`gpuprov`). */
  taskQueue?: string;
  workflows?: WorkflowSource;
  /** Activity (and, with `workflowsPath` only, workflow) interceptors, after gpuprov's own. */
  interceptors?: WorkerInterceptors;
  /** Traces (src/telemetry/tracing.ts): its interceptors, its sink, and the workflow module in the bundle. */
  tracing?: WorkerTracing;
  /** Concurrent activity executions per worker (default: the SDK's). */
  maxConcurrentActivities?: number;
  /**
   * Clouds whose task queues get a worker (`<taskQueue>-cloud-<cloud>`). Default: the registry's
   * clouds (`deps`), or those `createActivities` noted on the given `activities` (none for others).
   */
  clouds?: string[];
  /** Activities per second by cloud, over GPUPROV_RATE_<CLOUD> and the defaults (src/core/rate-limits.ts); undefined = no limit. */
  rateLimits?: Record<string, number | undefined>;
  /** GPUPROV_RATE_<CLOUD>, and where the default bundle is cached (GPUPROV_CACHE_DIR); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Told when the default bundle has to be built (it takes a while). */
  log?: (line: string) => void;
  /** The Worker Deployment Version of every worker of the group (src/server/worker-versioning.ts); default unversioned. */
  versioning?: WorkerDeploymentOptions;
};

/**
 * The workflow interceptor modules of gpuprov's bundle: the log attributes, and the OpenTelemetry
 * module when tracing. A prebuilt bundle given to {@link buildWorker} must have been built with them.
 */
export function workflowInterceptorModules(tracing: boolean): string[] {
  return [...defaultInterceptorModules(), ...(tracing ? [otelWorkflowInterceptorModule()] : [])];
}

/**
 * The bundle a worker runs: the one prebuilt into an installed package (`dist/`, see
 * scripts/build-package.ts), else gpuprov's cached bundle of the sources (built on a cache miss).
 */
export function defaultWorkflowBundle(tracing: boolean, o: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {}): string | Promise<string> {
  return prebuiltWorkflowBundle(tracing) ?? workflowBundlePath({ ...o, interceptorModules: workflowInterceptorModules(tracing) });
}

/**
 * gpuprov's workers: one polling `taskQueue` with the workflows (or the given ones) and activities,
 * and one per cloud polling that cloud's task queue with the same activities, no workflows, and the
 * cloud's activities-per-second limit (`maxTaskQueueActivitiesPerSecond`: the server enforces it for
 * every worker of the queue together; src/core/rate-limits.ts says why).
 */
export async function buildWorker(o: BuildWorkerOptions): Promise<WorkerGroup> {
  const interceptorModules = workflowInterceptorModules(o.tracing !== undefined);
  const workflows = o.workflows ?? {
    bundlePath: defaultWorkflowBundle(o.tracing !== undefined, { ...(o.env ? { env: o.env } : {}), ...(o.log ? { log: o.log } : {}) }),
  };
  if ('bundlePath' in workflows && o.interceptors?.workflowModules?.length) {
    throw new Error('buildWorker: workflow interceptor modules are not in a prebuilt bundle; pass workflows: { workflowsPath }');
  }
  let activities: object;
  if (o.deps) {
    // Loaded only here: activities pull in every cloud SDK, which workers given fakes do not need.
    const { createActivities } = await import('./activities');
    const { deploymentFromEnv } = await import('./providers/deployment');
    activities = createActivities({ ...o.deps, owner: o.deps.owner ?? deploymentFromEnv({}, o.namespace) });
  } else {
    activities = o.activities;
  }
  const interceptors: WorkerInterceptors = {
    ...o.interceptors,
    activity: [activityLogAttributes, ...(o.tracing?.activity ?? []), ...(o.interceptors?.activity ?? [])],
    // A prebuilt bundle holds its modules already; webpack here needs them named.
    ...('workflowsPath' in workflows ? { workflowModules: [...interceptorModules, ...(o.interceptors?.workflowModules ?? [])] } : {}),
  };
  const taskQueue = o.taskQueue ?? TASK_QUEUE;
  const clouds = o.clouds ?? (o.deps ? o.deps.registry.names() : servedClouds(activities));
  const env = o.env ?? process.env;
  const codec = codecOption(env); // GPUPROV_CODEC_KEYS(_FILE): payloads encrypted (src/codec)
  const cloudWorkers = new Map<string, Worker>();
  for (const cloud of clouds ?? []) {
    const limit = o.rateLimits && cloud in o.rateLimits ? o.rateLimits[cloud] : rateLimitFor(cloud, env);
    const worker = await Worker.create({
      connection: o.connection,
      namespace: o.namespace,
      taskQueue: cloudTaskQueue(taskQueue, cloud),
      activities,
      ...codec,
      maxHeartbeatThrottleInterval: '3s',
      interceptors: { activity: interceptors.activity ?? [] },
      ...(o.versioning ? { workerDeploymentOptions: o.versioning } : {}),
      ...(limit !== undefined ? { maxTaskQueueActivitiesPerSecond: limit } : {}),
      ...(o.maxConcurrentActivities !== undefined ? { maxConcurrentActivityTaskExecutions: o.maxConcurrentActivities } : {}),
    });
    cloudWorkers.set(cloud, worker);
  }
  const main = await Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue,
    ...('bundlePath' in workflows ? { workflowBundle: { codePath: await workflows.bundlePath } } : { workflowsPath: workflows.workflowsPath }),
    activities,
    ...codec,
    // Heartbeats reach the server at least this often, well inside the workflows' heartbeat
    // timeout (HEARTBEAT_TIMEOUT in src/workflows/proxies.ts); the SDK's default throttle
    // (0.8 × the timeout) left a live activity a margin of ~2 s under load.
    maxHeartbeatThrottleInterval: '3s',
    interceptors,
    ...(o.versioning ? { workerDeploymentOptions: o.versioning } : {}),
    ...(o.tracing ? { sinks: o.tracing.sinks } : {}),
    ...(o.maxConcurrentActivities !== undefined ? { maxConcurrentActivityTaskExecutions: o.maxConcurrentActivities } : {}),
  });
  return new WorkerGroup(main, cloudWorkers);
}

/** A worker running in the background of this process (tests, the bench). */
export interface RunningWorker {
  worker: WorkerGroup;
  /** Settles when the worker stopped (rejects when it failed). */
  done: Promise<void>;
  /** Shuts the worker down and waits for `run()` to finish; idempotent. */
  stop(): Promise<void>;
}

/** Starts `worker.run()` and resolves once it polls (or stopped trying). */
export async function runInBackground(worker: WorkerGroup): Promise<RunningWorker> {
  const done = worker.run();
  done.catch(() => undefined); // the caller reads it through `done` or `stop()`
  while (worker.getState() === 'INITIALIZED') await new Promise((r) => setTimeout(r, 10));
  let stopped: Promise<void> | undefined;
  return {
    worker,
    done,
    stop: () => {
      stopped ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await done;
      })();
      return stopped;
    },
  };
}

/** The account watchers' settings: GPUPROV_ORPHAN_GRACE (`10m`, `90s`, `1h`; default 10 minutes). */
export function watcherFromEnv(env: NodeJS.ProcessEnv): Pick<ActivityDeps, 'watcher'> {
  const grace = env.GPUPROV_ORPHAN_GRACE;
  return grace ? { watcher: { orphanGraceMs: parseDuration('GPUPROV_ORPHAN_GRACE', grace) } } : {};
}

/**
 * The worker's deployment id, claimed in the task queue's deployment record before anything polls:
 * GPUPROV_DEPLOYMENT, else the embedded default's own id (made once, src/server/embedded-deployment.ts),
 * else the namespace. A record of another id with open VMs, or of another SSH key, is an
 * InputError (exit 2) naming the fix: no launch ever fails for it later.
 */
async function claimedDeployment(
  env: NodeJS.ProcessEnv,
  client: Client,
  conn: WorkerConnection,
  taskQueue: string,
  keyFingerprint: string,
  log: (line: string) => void,
): Promise<string> {
  const { deploymentFromEnv } = await import('./providers/deployment');
  const { claimDeployment } = await import('./client/deployment-record');
  let deployment: string;
  if (env.GPUPROV_DEPLOYMENT === undefined && env.GPUPROV_EMBEDDED_ADDRESS) {
    const { embeddedDeploymentId } = await import('./server/embedded-deployment');
    deployment = await embeddedDeploymentId(stateDir(env), client, taskQueue, conn.namespace);
  } else deployment = deploymentFromEnv(env, conn.namespace);
  const claimed = await claimDeployment(client, taskQueue, { deployment, keyFingerprint }, { rotateKey: env[ROTATE_KEY_VAR] === '1' });
  if (claimed.outcome !== 'ok')
    log(`deployment record of task queue ${taskQueue}: ${claimed.outcome} (deployment ${deployment}, worker key ${keyFingerprint})`);
  return deployment;
}

/** The worker process: wires everything from the environment and runs until a signal. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Must come before any connection or worker is created.
  const telemetry = await installWorkerTelemetry(env);
  const log = (line: string): void => telemetry.logger.info(line, { component: 'gpuprov' });
  // Before anything starts: a bad GPUPROV_SSH_KEY_FILE / GPUPROV_SSH_PRIVATE_KEY exits 2 at once.
  const { loadWorkerIdentity } = await import('./ssh/deployment-key');
  const ssh = await loadWorkerIdentity(env, path.join(stateDir(env), 'keys'));
  // Built (or found in the cache) by a child process while we connect: webpack never enters this
  // process's heap (bundling in-process left ~200 MB of RSS behind).
  const bundlePath = Promise.resolve(defaultWorkflowBundle(telemetry.tracing !== undefined, { env, log }));
  bundlePath.catch(() => undefined); // awaited by buildWorker; not unhandled if connecting fails first
  // Loaded here, not at the top: they pull in every cloud SDK.
  const { registryFromEnv } = await import('./providers/default-registry');
  const { deploymentFromEnv } = await import('./providers/deployment');
  // A bad GPUPROV_DEPLOYMENT exits 2 before connecting; the namespace default is known once connected.
  if (env.GPUPROV_DEPLOYMENT !== undefined) deploymentFromEnv(env, 'default');
  gateSettings(env); // a bad GPUPROV_REPLAY_GATE(_SAMPLE) exits 2 before connecting too
  const codec = codecOption(env); // a bad GPUPROV_CODEC_KEYS(_FILE) exits 2 before connecting too
  const versioned = versioningSetting(env, taskQueueFromEnv(env)).on; // bad GPUPROV_WORKER_VERSIONING* exits 2 before connecting
  const conn = await connectWorker(env);
  const taskQueue = taskQueueFromEnv(env);
  const client = new Client({ connection: conn.connection, namespace: conn.namespace, ...codec });
  // Before anything is claimed or polled: open workflows replay against this bundle (README, "Upgrading workers: the replay gate").
  // A versioned worker replays only the types that move to it (pinned runs stay on their version).
  const warn = (l: string): void => telemetry.logger.announce(l, { component: 'gpuprov' }, 'WARN');
  await replayGate({ client, taskQueue, bundlePath, env, log, warn, types: gatedTypes(versioned), ...codec });
  const deployment = await claimedDeployment(env, client, conn, taskQueue, ssh.fingerprint, log);
  const registry = registryFromEnv(env, { deployment });
  const versioning = workerVersioning(env, taskQueue, await bundlePath);
  if (versioning) log(`worker deployment version ${versioning.version.deploymentName}.${versioning.version.buildId}`);
  const worker = await buildWorker({
    connection: conn.connection,
    namespace: conn.namespace,
    taskQueue,
    deps: { registry, ssh, owner: deployment, ...watcherFromEnv(env) },
    workflows: { bundlePath },
    ...(versioning ? { versioning } : {}),
    ...(telemetry.tracing ? { tracing: telemetry.tracing } : {}),
  });
  const gauges = telemetry.startGauges(client);
  try {
    // The gauges stop before the connection they read through closes.
    await runUntilSignal(worker, conn, taskQueue, registry.names(), () => gauges.stop());
  } finally {
    await telemetry.shutdown();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    // Through the worker's logger once it exists (one JSON line in the daemon's log file).
    const logger = workerLogger();
    if (err instanceof InputError) {
      // Bad input is for the person starting the worker: plain words on stderr as well as the log line.
      logger?.announce(`gpuprov worker: ${err.field}: ${err.message}`, { component: 'gpuprov', field: err.field, fix: err.suggestion }, 'ERROR');
      process.stderr.write(`gpuprov worker: ${err.field}: ${err.message}\n${err.suggestion ? `  fix: ${err.suggestion}\n` : ''}`);
      process.exit(2);
    }
    if (reportRefusal(err, logger)) process.exit(REPLAY_GATE_EXIT);
    if (logger) logger.announce('gpuprov worker failed', { component: 'gpuprov', error: err }, 'ERROR');
    else process.stderr.write(`gpuprov worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
