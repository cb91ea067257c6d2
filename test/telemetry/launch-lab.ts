/**
 * One launch observed from outside, shared by the telemetry tests: the real worker process
 * (`src/worker.ts` main(), as the embedded daemon runs it) on the local cloud, its stdout and
 * stderr going to a file, its Prometheus endpoint and OTLP exporter pointed at this process; the
 * VM started through the CLI's own client (`connectClient` + `GpuprovClient`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort } from '../../src/ports';
import { terminate } from '../../src/server/dev-server';
import { WORKER_NODE_FLAGS } from '../../src/server/embedded';
import { WORKER_READY_TEXT } from '../../src/server/worker-ready';

const WORKER_ENTRY = path.join(__dirname, '..', '..', 'src', 'worker.ts');

export interface WorkerUnderTest {
  child: ChildProcess;
  logFile: string;
  metricsAddress: string;
  taskQueue: string;
  /** SIGTERM and wait until it exited (spans flushed, log complete). */
  stop(): Promise<void>;
}

export interface WorkerOptions {
  address: string;
  namespace: string;
  otlpEndpoint: string;
  /** Local-cloud fault rules (src/providers/local/faults.ts). */
  faults: object[];
  readyTimeoutMs?: number;
}

/** Starts `src/worker.ts` with telemetry on; resolves once its log says it polls. */
export async function startWorkerUnderTest(o: WorkerOptions): Promise<WorkerUnderTest & { dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-telemetry-'));
  const logFile = path.join(dir, 'worker.log');
  const faultsFile = path.join(dir, 'faults.json');
  fs.writeFileSync(faultsFile, JSON.stringify({ rules: o.faults }));
  const metricsAddress = `127.0.0.1:${await freePort()}`;
  const taskQueue = `telemetry-${randomUUID()}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...(process.env.GPUPROV_CACHE_DIR ? { GPUPROV_CACHE_DIR: process.env.GPUPROV_CACHE_DIR } : {}),
    TEMPORAL_ADDRESS: o.address,
    TEMPORAL_NAMESPACE: o.namespace,
    GPUPROV_TASK_QUEUE: taskQueue,
    GPUPROV_CLOUDS: 'local',
    GPUPROV_LOCAL_ROOT: path.join(dir, 'cloud'),
    GPUPROV_LOCAL_FAULTS: faultsFile,
    GPUPROV_STATE_DIR: path.join(dir, 'state'),
    GPUPROV_LOG_LEVEL: 'debug',
    GPUPROV_METRICS_ADDRESS: metricsAddress,
    GPUPROV_METRICS_INTERVAL_MS: '300',
    OTEL_EXPORTER_OTLP_ENDPOINT: o.otlpEndpoint,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    // Colour asked for everywhere: the log file must still have none.
    FORCE_COLOR: '3',
  };
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', pathToFileURL(require.resolve('tsx')).href, WORKER_ENTRY], {
    env,
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) await terminate(child.pid, { graceMs: 20_000 });
    await exited;
  };
  const deadline = Date.now() + (o.readyTimeoutMs ?? 150_000);
  for (;;) {
    if (fs.readFileSync(logFile, 'utf8').includes(WORKER_READY_TEXT)) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the worker did not start:\n${fs.readFileSync(logFile, 'utf8').slice(-3_000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, dir, logFile, metricsAddress, taskQueue, stop };
}

/** Polls `read` until `done` holds for its value (bounded by `timeoutMs`); returns the last value. */
export async function pollUntil<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? ` (last error: ${lastErr instanceof Error ? lastErr.message : JSON.stringify(lastErr)})` : ''}`);
}
