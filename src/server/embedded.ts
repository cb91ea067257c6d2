/**
 * The embedded default: a Temporal dev server persisted to `<stateDir>/temporal.db` (gRPC
 * 127.0.0.1:7233, Web UI :8233) plus one gpuprov worker, both background daemons with pid files
 * under `<stateDir>/run/` and logs under `<stateDir>/logs/`. Also decides where to connect.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConnectionOptions } from '@temporalio/client';
import { checkDirs } from '../paths';
import { livePid, logFile, pidFile, startWorkerDaemon, type Daemon } from './daemons';
import { isTemporalHealthy, startDevServer, terminate } from './dev-server';
import { uiCodecEndpointFromEnv } from '../codec';
import { EMBEDDED_NAMESPACE, embeddedConfig, type EmbeddedConfig } from './embedded-config';
import { withLock } from './lock';
import { checkTemporalCliPath, obtainTemporalCli } from './temporal-cli';
import { temporalConfig } from './temporal-config';

export { EMBEDDED_NAMESPACE, embeddedConfig, type EmbeddedConfig } from './embedded-config';
export { WORKER_NODE_FLAGS } from './daemons';

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

export interface StartEmbeddedOptions {
  env?: NodeJS.ProcessEnv;
  /** Aborting it stops what this call started (as SIGINT does) and rejects with StartInterruptedError. */
  signal?: AbortSignal;
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

/** Thrown by startEmbedded when interrupted, after stopping what that call had started. */
export class StartInterruptedError extends Error {
  constructor(readonly signal?: NodeJS.Signals) {
    super(`interrupted${signal ? ` (${signal})` : ''} while starting the embedded default; stopped what this start had begun`);
    this.name = 'StartInterruptedError';
  }
}

/**
 * Starts whatever part of the embedded default is not running; idempotent. Interruptible: on
 * `opts.signal`, SIGINT or SIGTERM it stops the server and worker it had started, removes their pid
 * files and rejects with StartInterruptedError (re-raising the signal, so the CLI still dies of it).
 * Because the server's pid file is written before its health wait and our server is also known by
 * its database file, even a hard kill leaves a server that `start` adopts and `server stop` stops.
 */
export async function startEmbedded(opts: StartEmbeddedOptions = {}): Promise<StartEmbeddedResult> {
  const env = opts.env ?? process.env;
  const cfg = embeddedConfig(env);
  // A TEMPORAL_CLI_PATH that is not a working CLI is a configuration error, refused before anything starts.
  await checkTemporalCliPath(env);
  fs.mkdirSync(cfg.runDir, { recursive: true });
  let received: NodeJS.Signals | undefined;
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    received = sig;
    ac.abort(new StartInterruptedError(sig));
  };
  const onAbort = (): void => ac.abort(new StartInterruptedError());
  const listen = (on: boolean): void => {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      if (on) process.on(sig, onSignal);
      else process.off(sig, onSignal);
    }
  };
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await withLock(path.join(cfg.runDir, 'start.lock'), async () => {
      listen(true);
      return startParts(cfg, env, opts, ac.signal);
    });
  } finally {
    listen(false);
    opts.signal?.removeEventListener('abort', onAbort);
    // Cleaned up and the lock released: now die of the signal as if we had not caught it.
    if (received) process.kill(process.pid, received);
  }
}

async function startParts(cfg: EmbeddedConfig, env: NodeJS.ProcessEnv, opts: StartEmbeddedOptions, signal: AbortSignal): Promise<StartEmbeddedResult> {
  let startedServer: number | undefined;
  let startedWorker = false;
  try {
    if (livePid(cfg, 'temporal') === undefined) {
      if (await isTemporalHealthy(cfg.address)) {
        throw new Error(
          `a Temporal server not started by gpuprov already answers on ${cfg.address}: use it (it is picked up automatically), ` +
            'or stop it, or set GPUPROV_EMBEDDED_PORT / GPUPROV_EMBEDDED_UI_PORT to other ports',
        );
      }
      const cli = await abortable(obtainTemporalCli({ env, log: opts.log }), signal);
      signal.throwIfAborted();
      await startDevServer({
        cliPath: cli.path,
        port: cfg.port,
        uiPort: cfg.uiPort,
        dbFile: cfg.dbFile,
        namespace: EMBEDDED_NAMESPACE,
        logFile: logFile(cfg, 'temporal'),
        logFormat: 'json',
        detached: true,
        env,
        ...codecUi(env),
        signal,
        // Recorded before the health wait: an interrupted start-up leaves a server known as ours.
        onSpawn: (pid) => {
          startedServer = pid;
          fs.writeFileSync(pidFile(cfg, 'temporal'), String(pid));
        },
      });
    } else if (!(await waitHealthy(cfg.address, 60_000, signal))) {
      signal.throwIfAborted();
      throw new Error(`the embedded Temporal server (pid ${livePid(cfg, 'temporal')}) does not answer on ${cfg.address}; see ${logFile(cfg, 'temporal')}`);
    }
    if (opts.worker !== false && livePid(cfg, 'worker') === undefined) {
      await startWorkerDaemon(cfg, env, 120_000, signal);
      startedWorker = true;
    }
  } catch (err) {
    if (signal.aborted && startedServer !== undefined) await terminate(startedServer, { group: true });
    if (signal.aborted && startedServer !== undefined) fs.rmSync(pidFile(cfg, 'temporal'), { force: true });
    throw err;
  }
  const status = await embeddedStatus(env);
  return { status, alreadyRunning: startedServer === undefined && !startedWorker, startedServer: startedServer !== undefined, startedWorker };
}

/** `p`, or a rejection with the abort reason as soon as `signal` aborts (`p` itself runs on). */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function waitHealthy(address: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal?.aborted) {
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
  // Our own server's process alive counts without the probe: on a loaded machine it may answer
  // later than the probe waits, and the connection's own timeout is longer.
  const ours = livePid(cfg, 'temporal') !== undefined;
  if (ours || (await isTemporalHealthy(cfg.address, undefined, 1_500))) {
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
  uiCodecEndpointFromEnv(env);
  embeddedConfig(env);
  temporalConfig(env);
}

/** The Web UI's codec endpoint (GPUPROV_CODEC_UI_ENDPOINT, src/codec), when set. */
function codecUi(env: NodeJS.ProcessEnv): { uiCodecEndpoint?: string } {
  const endpoint = uiCodecEndpointFromEnv(env);
  return endpoint ? { uiCodecEndpoint: endpoint } : {};
}
