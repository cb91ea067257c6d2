/**
 * Starts a gpuprov worker in a separate node process (`worker-main.ts` under tsx, with the
 * worker's node flags), so a test can SIGKILL it mid-workflow and start another. Resolves once
 * the worker logs that it polls.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { terminate } from '../../src/server/dev-server';
import { WORKER_NODE_FLAGS } from '../../src/server/embedded';
import { WORKER_READY_TEXT } from '../../src/server/worker-ready';
import { workflowBundlePath } from '../../src/server/workflow-bundle';

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Sends a signal (e.g. 'SIGKILL' to simulate a crash) and resolves when the process exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Graceful stop: SIGTERM, then SIGKILL after 15 s. */
  stop(): Promise<void>;
}

export interface SpawnWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Extra environment (GPUPROV_FAKE_STATE, GPUPROV_LOCAL_ROOT, …; see worker-main.ts). */
  env?: Record<string, string>;
  /** How long to wait for the polling line (bundling workflows takes a while). Default 90 s. */
  readyTimeoutMs?: number;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/**
 * gpuprov's workflow bundle, built once per source change (in a child process) and cached under
 * the cache dir, shared by every test file and run: spawned workers start in about 2 s instead of
 * re-bundling (~13 s of CPU on 2 cores).
 */
export function prebuiltWorkflowBundle(): Promise<string> {
  return workflowBundlePath();
}

export async function spawnWorkerProcess(o: SpawnWorkerOptions): Promise<WorkerProcess> {
  const entry = path.join(__dirname, 'worker-main.ts');
  const prebuilt = o.env?.GPUPROV_WORKFLOWS_PATH || o.env?.GPUPROV_WORKFLOW_BUNDLE ? {} : { GPUPROV_WORKFLOW_BUNDLE: await prebuiltWorkflowBundle() };
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', pathToFileURL(require.resolve('tsx')).href, entry], {
    env: {
      ...process.env,
      ...prebuilt,
      ...o.env,
      TEMPORAL_ADDRESS: o.address,
      TEMPORAL_NAMESPACE: o.namespace,
      GPUPROV_TASK_QUEUE: o.taskQueue,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => live.delete(child));
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (out.includes(WORKER_READY_TEXT)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => reject(new Error(`worker process exited before polling:\n${out.slice(-3_000)}`)));
    setTimeout(
      () => reject(new Error(`worker process not polling after ${o.readyTimeoutMs ?? 90_000} ms:\n${out.slice(-3_000)}`)),
      o.readyTimeoutMs ?? 90_000,
    ).unref();
  });
  const pid = child.pid;
  try {
    if (pid === undefined) throw new Error('could not spawn the worker process');
    await ready;
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  }
  return {
    pid,
    child,
    output: () => out,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) await terminate(pid, { graceMs: 15_000 });
      await exited;
    },
  };
}
