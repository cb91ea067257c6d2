/**
 * The embedded default's two daemons on this machine: their pid files under `<stateDir>/run/`,
 * logs under `<stateDir>/logs/`, how our own Temporal server is recognised (by its database file,
 * even without a pid file) and how the worker daemon is started.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { terminate } from './dev-server';
import { EMBEDDED_NAMESPACE, type EmbeddedConfig } from './embedded-config';
import { pidAlive } from './lock';
import { REPLAY_GATE_EXIT, refusalIn } from '../core/replay-gate';
import { WORKER_READY_TEXT } from './worker-ready';

export type Daemon = 'temporal' | 'worker';

export const pidFile = (cfg: EmbeddedConfig, d: Daemon): string => path.join(cfg.runDir, `${d}.pid`);
export const logFile = (cfg: EmbeddedConfig, d: Daemon): string => path.join(cfg.logDir, `${d}.log`);

/** A process's arguments, or undefined where there is no /proc (macOS) or the process is gone. */
function argv(pid: number): string[] | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
}

/** True for `temporal server start-dev … --db-filename <cfg.dbFile>`. */
function isOurServer(args: string[], cfg: EmbeddedConfig): boolean {
  const i = args.indexOf('--db-filename');
  const db = i >= 0 ? args[i + 1] : undefined;
  return args.includes('start-dev') && db !== undefined && path.resolve(db) === cfg.dbFile;
}

/**
 * Our own dev server found by its database file when its pid file is missing or stale (a start-up
 * killed before writing it, or a pid file deleted by hand); the pid file is written again.
 */
function adoptServerByDb(cfg: EmbeddedConfig): number | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const pid = /^\d+$/.test(e) ? Number(e) : 0;
    if (pid === 0 || pid === process.pid) continue;
    const args = argv(pid);
    if (args && isOurServer(args, cfg)) {
      fs.mkdirSync(cfg.runDir, { recursive: true });
      fs.writeFileSync(pidFile(cfg, 'temporal'), String(pid));
      return pid;
    }
  }
  return undefined;
}

/** The pid of a live daemon of ours: from its pid file, or for the server also by its database file. */
export function livePid(cfg: EmbeddedConfig, d: Daemon): number | undefined {
  let pid: number | undefined;
  try {
    pid = Number.parseInt(fs.readFileSync(pidFile(cfg, d), 'utf8'), 10);
  } catch {
    pid = undefined;
  }
  if (pid !== undefined && pidAlive(pid)) {
    // A pid file can outlive its process and the pid be reused by something else.
    const args = argv(pid);
    if (args === undefined) return pid; // No /proc: trust the pid.
    if (d === 'temporal' ? isOurServer(args, cfg) : args.some((a) => a.includes('worker'))) return pid;
  }
  return d === 'temporal' ? adoptServerByDb(cfg) : undefined;
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

export function tail(file: string, bytes = 2_000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(-bytes).trim();
  } catch {
    return '';
  }
}

/** Starts the worker daemon and waits for its ready line; on failure or `signal`, stops it and throws. */
export async function startWorkerDaemon(cfg: EmbeddedConfig, env: NodeJS.ProcessEnv, timeoutMs: number, signal?: AbortSignal): Promise<number> {
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
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the worker (${process.execPath})`);
  fs.writeFileSync(pidFile(cfg, 'worker'), String(pid));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal?.aborted) {
    const fresh = fs.readFileSync(log, 'utf8').slice(offset);
    if (fresh.includes(WORKER_READY_TEXT)) return pid;
    if (!pidAlive(pid)) break;
    await sleep(200);
  }
  await terminate(pid, { group: true });
  fs.rmSync(pidFile(cfg, 'worker'), { force: true });
  if (signal?.aborted) throw signal.reason;
  const refusal = (await Promise.race([exited, sleep(1_000)])) === REPLAY_GATE_EXIT ? refusalIn(fs.readFileSync(log, 'utf8').slice(offset)) : undefined;
  if (refusal) throw new Error(`the gpuprov worker refused to start on this code (${log}):\n${refusal}`);
  throw new Error(`the gpuprov worker did not start; last lines of ${log}:\n${tail(log)}`);
}
