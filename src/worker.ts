/**
 * The gpuprov worker: the one place where connection, providers, SSH identity, activities and
 * workflows are wired. Run directly (`npm run worker`, or the embedded default's daemon) it
 * connects through @temporalio/envconfig (temporal.toml profile, TEMPORAL_* variables) or to the
 * embedded server whose address the daemon passes in GPUPROV_EMBEDDED_ADDRESS.
 */
import * as path from 'node:path';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { stateDir } from './paths';
import { WORKER_READY_TEXT } from './server/worker-ready';
import { defaultWorkflowsPath, workflowBundlePath } from './server/workflow-bundle';
import { TASK_QUEUE } from './core/api';
import { InputError } from './core/errors';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue?: string;
  /** The activity implementations (`createActivities(...)`, or test fakes). */
  activities: object;
  /** Concurrent activity executions (default: the SDK's). */
  maxConcurrent?: number;
  /** Default: `src/workflows` (tests may pass their own workflows module). */
  workflowsPath?: string;
  /**
   * A prebuilt bundle (`bundleWorkflowCode` output written to a file, e.g. `workflowBundlePath()`
   * of src/server/workflow-bundle.ts): skips bundling with webpack in this process.
   */
  workflowBundlePath?: string;
}

/** A worker polling `taskQueue` with gpuprov's workflows and the given activities. */
export async function createWorker(o: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue ?? TASK_QUEUE,
    ...(o.workflowBundlePath ? { workflowBundle: { codePath: o.workflowBundlePath } } : { workflowsPath: o.workflowsPath ?? defaultWorkflowsPath() }),
    activities: o.activities,
    ...(o.maxConcurrent !== undefined ? { maxConcurrentActivityTaskExecutions: o.maxConcurrent } : {}),
  });
}

export interface WorkerConnection {
  connection: NativeConnection;
  address: string;
  namespace: string;
}

/** Connects as the daemon was told (GPUPROV_EMBEDDED_ADDRESS) or as envconfig says. */
export async function connectWorker(env: NodeJS.ProcessEnv = process.env): Promise<WorkerConnection> {
  if (env.GPUPROV_EMBEDDED_ADDRESS) {
    const address = env.GPUPROV_EMBEDDED_ADDRESS;
    return { connection: await NativeConnection.connect({ address }), address, namespace: env.GPUPROV_EMBEDDED_NAMESPACE || 'default' };
  }
  const overrideEnvVars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const { connectionOptions, namespace } = loadClientConnectConfig({ overrideEnvVars });
  const address = connectionOptions.address ?? '127.0.0.1:7233';
  const connection = await NativeConnection.connect({ ...connectionOptions, address });
  return { connection, address, namespace: namespace ?? 'default' };
}

/**
 * Runs `worker` until SIGINT/SIGTERM, logging one line (WORKER_READY_TEXT …) once it polls;
 * closes the connection afterwards.
 */
export async function runUntilSignal(worker: Worker, conn: WorkerConnection, taskQueue: string, clouds: string[]): Promise<void> {
  const stop = (): void => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const running = worker.run();
  while (worker.getState() === 'INITIALIZED') await new Promise((r) => setTimeout(r, 20));
  if (worker.getState() === 'RUNNING') {
    process.stdout.write(
      `${WORKER_READY_TEXT} "${taskQueue}" in namespace "${conn.namespace}" at ${conn.address}; clouds: ${clouds.join(', ') || 'none'}\n`,
    );
  }
  try {
    await running;
  } finally {
    await conn.connection.close();
  }
}

/** The worker process: wires everything from the environment and runs until a signal. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (env.GPUPROV_METRICS_ADDRESS) {
    // Must come before any connection or worker is created.
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: env.GPUPROV_METRICS_ADDRESS } } } });
  }
  // Loaded here, not at the top: they pull in every cloud SDK, which tests of createWorker do not need.
  const [{ createActivities }, { loadWorkerIdentity }, { registryFromEnv }] = await Promise.all([
    import('./activities'),
    import('./ssh/deployment-key'),
    import('./providers/default-registry'),
  ]);
  // Before anything starts: a bad GPUPROV_SSH_KEY_FILE / GPUPROV_SSH_PRIVATE_KEY exits 2 at once.
  const ssh = await loadWorkerIdentity(env, path.join(stateDir(env), 'keys'));
  // Built (or found in the cache) by a child process while we connect: webpack never enters this
  // process's heap (bundling in-process left ~200 MB of RSS behind).
  const bundle = workflowBundlePath({ env, log: (line) => process.stdout.write(`${line}\n`) });
  bundle.catch(() => undefined); // awaited below; not unhandled if connecting fails first
  const conn = await connectWorker(env);
  const taskQueue = env.GPUPROV_TASK_QUEUE || TASK_QUEUE;
  const registry = registryFromEnv(env);
  const activities = createActivities({ registry, ssh, owner: conn.namespace });
  const worker = await createWorker({ connection: conn.connection, namespace: conn.namespace, taskQueue, activities, workflowBundlePath: await bundle });
  await runUntilSignal(worker, conn, taskQueue, registry.names());
}

if (require.main === module) {
  main().catch((err: unknown) => {
    if (err instanceof InputError) {
      process.stderr.write(`gpuprov worker: ${err.field}: ${err.message}\n${err.suggestion ? `  fix: ${err.suggestion}\n` : ''}`);
      process.exit(2);
    }
    process.stderr.write(`gpuprov worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
