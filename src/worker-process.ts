/**
 * A worker process's connection and lifetime: where it connects (the daemon's embedded server, or
 * @temporalio/envconfig), which task queue it serves, and running its workers until SIGINT/SIGTERM
 * with one ready line once they poll. Used by ./worker.ts's `main` and the spawned test workers.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection } from '@temporalio/worker';
import { TASK_QUEUE } from './core/api';
import { WORKER_READY_TEXT } from './server/worker-ready';
import { workerLogger } from './telemetry';
import type { WorkerGroup } from './worker-group';

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

/** The task queue of a worker process: GPUPROV_TASK_QUEUE, else TASK_QUEUE. */
export function taskQueueFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.GPUPROV_TASK_QUEUE || TASK_QUEUE;
}

/**
 * Runs `worker` until SIGINT/SIGTERM, logging one line (WORKER_READY_TEXT …) once it polls;
 * closes the connection afterwards. `onSignal` runs first when a signal arrives.
 */
export async function runUntilSignal(worker: WorkerGroup, conn: WorkerConnection, taskQueue: string, clouds: string[], onSignal?: () => void): Promise<void> {
  const stop = (): void => {
    onSignal?.();
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const running = worker.run();
  while (worker.getState() === 'INITIALIZED') await new Promise((r) => setTimeout(r, 20));
  if (worker.getState() === 'RUNNING') {
    const line = `${WORKER_READY_TEXT} "${taskQueue}" in namespace "${conn.namespace}" at ${conn.address}; clouds: ${clouds.join(', ') || 'none'}`;
    const logger = workerLogger();
    if (logger) logger.announce(line, { component: 'gpuprov', taskQueue, namespace: conn.namespace, clouds });
    else process.stdout.write(`${line}\n`);
  }
  try {
    await running;
  } finally {
    await conn.connection.close();
  }
}
