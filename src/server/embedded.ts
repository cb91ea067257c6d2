/**
 * The embedded default: a Temporal dev server persisted to `<stateDir>/temporal.db` (gRPC
 * 127.0.0.1:7233, Web UI :8233) plus one gpuprov worker, both background daemons with pid files
 * under `<stateDir>/run/` and logs under `<stateDir>/logs/`. Also decides where to connect.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConnectionOptions } from '@temporalio/client';
import { InputError } from '../core/errors';
import { checkDirs, stateDir } from '../paths';
import { isTemporalHealthy, startDevServer, terminate } from './dev-server';
import { pidAlive, withLock } from './lock';
import { obtainTemporalCli } from './temporal-cli';
import { temporalConfig } from './temporal-config';
import { WORKER_READY_TEXT } from './worker-ready';

export const EMBEDDED_NAMESPACE = 'default';

export interface EmbeddedConfig {
  stateDir: string;
  port: number;
  uiPort: number;
  /** `127.0.0.1:<port>` */
  address: string;
  /** `http://localhost:<uiPort>` */
  uiUrl: string;
  dbFile: string;
  logDir: string;
  runDir: string;
}

function intFromEnv(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n <= 0 || n > 65535) {
    throw new InputError(name, `${name}=${value} is not a TCP port`, `set ${name} to a port from 1 to 65535 (default ${fallback}), or unset it`);
  }
  return n;
}

/** Paths and ports of the embedded default (`GPUPROV_EMBEDDED_PORT` / `_UI_PORT` override). */
export function embeddedConfig(env: NodeJS.ProcessEnv = process.env): EmbeddedConfig {
  const dir = stateDir(env);
  const port = intFromEnv(env.GPUPROV_EMBEDDED_PORT, 7233, 'GPUPROV_EMBEDDED_PORT');
  const uiPort = intFromEnv(env.GPUPROV_EMBEDDED_UI_PORT, 8233, 'GPUPROV_EMBEDDED_UI_PORT');
  if (port === uiPort)
    throw new InputError(
      'GPUPROV_EMBEDDED_UI_PORT',
      `the Web UI port ${uiPort} is the gRPC port too`,
      'give GPUPROV_EMBEDDED_PORT and GPUPROV_EMBEDDED_UI_PORT different ports (default 7233 and 8233)',
    );
  return {
    stateDir: dir,
    port,
    uiPort,
    address: `127.0.0.1:${port}`,
    uiUrl: `http://localhost:${uiPort}`,
    dbFile: path.join(dir, 'temporal.db'),
    logDir: path.join(dir, 'logs'),
    runDir: path.join(dir, 'run'),
  };
}

type Daemon = 'temporal' | 'worker';

const pidFile = (cfg: EmbeddedConfig, d: Daemon): string => path.join(cfg.runDir, `${d}.pid`);
const logFile = (cfg: EmbeddedConfig, d: Daemon): string => path.join(cfg.logDir, `${d}.log`);

/** The recorded pid when that process is alive and (where /proc exists) is the right program. */
function livePid(cfg: EmbeddedConfig, d: Daemon): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(fs.readFileSync(pidFile(cfg, d), 'utf8'), 10);
  } catch {
    return undefined;
  }
  if (!pidAlive(pid)) return undefined;
  try {
    // A pid file can outlive its process and the pid be reused by something else.
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmdline.includes(d === 'temporal' ? 'start-dev' : 'worker')) return undefined;
  } catch {
    // No /proc (macOS): trust the pid.
  }
  return pid;
}

export interface DaemonStatus {
  pid?: number;
  alive: boolean;
  logFile: string;
}

export interface EmbeddedStatus {
  /** Server alive and answering, and worker alive. */
  running: boolean;
  address: string;
  namespace: string;
  uiUrl: string;
  stateDir: string;
  dbFile: string;
  server: DaemonStatus & { healthy: boolean };
  worker: DaemonStatus;
}

export async function embeddedStatus(env: NodeJS.ProcessEnv = process.env): Promise<EmbeddedStatus> {
  const cfg = embeddedConfig(env);
  const serverPid = livePid(cfg, 'temporal');
  const workerPid = livePid(cfg, 'worker');
  const healthy = serverPid !== undefined && (await isTemporalHealthy(cfg.address, EMBEDDED_NAMESPACE));
  return {
    running: healthy && workerPid !== undefined,
    address: cfg.address,
    namespace: EMBEDDED_NAMESPACE,
    uiUrl: cfg.uiUrl,
    stateDir: cfg.stateDir,
    dbFile: cfg.dbFile,
    server: { pid: serverPid, alive: serverPid !== undefined, healthy, logFile: logFile(cfg, 'temporal') },
    worker: { pid: workerPid, alive: workerPid !== undefined, logFile: logFile(cfg, 'worker') },
  };
}

/**
 * Node flags of a worker process (also in package.json's `worker` and `bench` scripts): a 512 MB
 * old-space limit per isolate (the main thread and the SDK's workflow thread). With Node's
 * default (~4 GB with enough RAM) V8 collects so lazily that 500 concurrent launches (P4) took
 * the worker process to 430–600 MB of RSS, mostly garbage and the native buffers it still holds;
 * with 512 it peaked at 360–380 MB, no slower. The SDK sizes its workflow cache from this limit
 * (`maxCachedWorkflows` ≈ 210 instead of ≈ 2300); an evicted workflow is replayed when it wakes.
 * Setting only `maxCachedWorkflows: 100` under the default limit was not enough (415–480 MB).
 */
export const WORKER_NODE_FLAGS = ['--max-old-space-size=512'];

/** The worker entry: `src/worker.ts` under tsx in a checkout, `worker.js` when built. */
export function workerCommand(): string[] {
  const ts = path.join(__dirname, '..', 'worker.ts');
  if (fs.existsSync(ts)) return [...WORKER_NODE_FLAGS, '--import', pathToFileURL(require.resolve('tsx')).href, ts];
  return [...WORKER_NODE_FLAGS, path.join(__dirname, '..', 'worker.js')];
}

function tail(file: string, bytes = 2_000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(-bytes).trim();
  } catch {
    return '';
  }
}

async function startWorkerDaemon(cfg: EmbeddedConfig, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<number> {
  const log = logFile(cfg, 'worker');
  fs.mkdirSync(cfg.logDir, { recursive: true });
  const offset = fs.existsSync(log) ? fs.statSync(log).size : 0;
  const fd = fs.openSync(log, 'a');
  const child = spawn(process.execPath, workerCommand(), {
    env: { ...env, GPUPROV_EMBEDDED_ADDRESS: cfg.address, GPUPROV_EMBEDDED_NAMESPACE: EMBEDDED_NAMESPACE },
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the worker (${process.execPath})`);
  fs.writeFileSync(pidFile(cfg, 'worker'), String(pid));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const fresh = fs.readFileSync(log, 'utf8').slice(offset);
    if (fresh.includes(WORKER_READY_TEXT)) return pid;
    if (!pidAlive(pid)) break;
    await sleep(200);
  }
  await terminate(pid, { group: true });
  fs.rmSync(pidFile(cfg, 'worker'), { force: true });
  throw new Error(`the gpuprov worker did not start; last lines of ${log}:\n${tail(log)}`);
}

export interface StartEmbeddedOptions {
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** Start the worker daemon too (default true). */
  worker?: boolean;
}

export interface StartEmbeddedResult {
  status: EmbeddedStatus;
  /** True when everything asked for was already running. */
  alreadyRunning: boolean;
  startedServer: boolean;
  startedWorker: boolean;
}

/** Starts whatever part of the embedded default is not running; idempotent. */
export async function startEmbedded(opts: StartEmbeddedOptions = {}): Promise<StartEmbeddedResult> {
  const env = opts.env ?? process.env;
  const cfg = embeddedConfig(env);
  fs.mkdirSync(cfg.runDir, { recursive: true });
  return withLock(path.join(cfg.runDir, 'start.lock'), async () => {
    let startedServer = false;
    let startedWorker = false;
    if (livePid(cfg, 'temporal') === undefined) {
      if (await isTemporalHealthy(cfg.address)) {
        throw new Error(
          `a Temporal server not started by gpuprov already answers on ${cfg.address}: use it (it is picked up automatically), ` +
            'or stop it, or set GPUPROV_EMBEDDED_PORT / GPUPROV_EMBEDDED_UI_PORT to other ports',
        );
      }
      const cli = await obtainTemporalCli({ env, log: opts.log });
      const server = await startDevServer({
        cliPath: cli.path,
        port: cfg.port,
        uiPort: cfg.uiPort,
        dbFile: cfg.dbFile,
        namespace: EMBEDDED_NAMESPACE,
        logFile: logFile(cfg, 'temporal'),
        logFormat: 'json',
        detached: true,
        env,
      });
      fs.writeFileSync(pidFile(cfg, 'temporal'), String(server.pid));
      startedServer = true;
    } else if (!(await waitHealthy(cfg.address, 60_000))) {
      throw new Error(`the embedded Temporal server (pid ${livePid(cfg, 'temporal')}) does not answer on ${cfg.address}; see ${logFile(cfg, 'temporal')}`);
    }
    if (opts.worker !== false && livePid(cfg, 'worker') === undefined) {
      await startWorkerDaemon(cfg, env, 120_000);
      startedWorker = true;
    }
    const status = await embeddedStatus(env);
    return { status, alreadyRunning: !startedServer && !startedWorker, startedServer, startedWorker };
  });
}

async function waitHealthy(address: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await isTemporalHealthy(address, EMBEDDED_NAMESPACE)) return true;
    await sleep(250);
  }
  return false;
}

/** Stops the worker, then the server; returns what was running. Leaves the SQLite file. */
export async function stopEmbedded(env: NodeJS.ProcessEnv = process.env): Promise<{ stopped: Daemon[] }> {
  const cfg = embeddedConfig(env);
  const stopped: Daemon[] = [];
  // Worker first: it drains in-flight activities before the server goes away.
  for (const [d, graceMs] of [
    ['worker', 30_000],
    ['temporal', 15_000],
  ] as const) {
    const pid = livePid(cfg, d);
    if (pid !== undefined) {
      await terminate(pid, { group: true, graceMs });
      stopped.push(d);
    }
    fs.rmSync(pidFile(cfg, d), { force: true });
  }
  return { stopped };
}

/** Where a client or worker should connect. */
export type TemporalTarget =
  | {
      /** TEMPORAL_ADDRESS or a temporal.toml profile (via @temporalio/envconfig). */
      kind: 'configured';
      source: 'env' | 'profile';
      address: string;
      namespace: string;
      connectionOptions: ConnectionOptions;
    }
  | {
      /** Something answers on the embedded default's address (possibly our own daemon). */
      kind: 'local';
      address: string;
      namespace: string;
      /** Known when it is gpuprov's own embedded server. */
      uiUrl?: string;
      ours: boolean;
    }
  | {
      /** Nothing configured or running: start the embedded default. */
      kind: 'embedded';
      address: string;
      namespace: string;
      uiUrl: string;
    };

/**
 * Decides where to connect: configured (TEMPORAL_ADDRESS or a temporal.toml profile) → that;
 * else a server answering on 127.0.0.1:7233 → that; else → the embedded default (not started).
 */
export async function resolveTemporal(env: NodeJS.ProcessEnv = process.env): Promise<TemporalTarget> {
  const { connectionOptions, namespace } = temporalConfig(env);
  if (connectionOptions.address) {
    return {
      kind: 'configured',
      source: env.TEMPORAL_ADDRESS ? 'env' : 'profile',
      address: connectionOptions.address,
      namespace: namespace ?? 'default',
      connectionOptions: {
        address: connectionOptions.address,
        tls: connectionOptions.tls,
        apiKey: typeof connectionOptions.apiKey === 'string' ? connectionOptions.apiKey : undefined,
        metadata: connectionOptions.metadata,
      },
    };
  }
  const cfg = embeddedConfig(env);
  if (await isTemporalHealthy(cfg.address, undefined, 1_500)) {
    const ours = livePid(cfg, 'temporal') !== undefined;
    return { kind: 'local', address: cfg.address, namespace: namespace ?? EMBEDDED_NAMESPACE, uiUrl: ours ? cfg.uiUrl : undefined, ours };
  }
  return { kind: 'embedded', address: cfg.address, namespace: EMBEDDED_NAMESPACE, uiUrl: cfg.uiUrl };
}

/**
 * Every setting a client or `provision server` needs, checked before anything is started or
 * contacted: the directories, the embedded default's ports and the Temporal settings.
 */
export function checkServerConfig(env: NodeJS.ProcessEnv = process.env): void {
  checkDirs(env);
  embeddedConfig(env);
  temporalConfig(env);
}
