/**
 * Runs `temporal server start-dev` (SQLite-backed, Web UI included) and waits until it answers
 * real gRPC calls. Used by the embedded default daemon and by the test harness.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../core/api';
import { pidAlive } from './lock';
import { obtainTemporalCli } from './temporal-cli';

/**
 * Write-ahead log: a commit appends to the log instead of rewriting pages under a rollback journal,
 * and readers do not block the writer. With `synchronous=normal` a commit survives the server
 * process crashing or being killed (the case the embedded server must survive); only an OS crash
 * or power loss can lose the last commits. Measured (BENCHMARKS.md, P4, 100 launches at once):
 * 5.2 s instead of 8.9 s, tasks queued at the server 1.4 s instead of 3.0 s per VM.
 */
export const DEFAULT_SQLITE_PRAGMAS: readonly string[] = ['journal_mode=wal', 'synchronous=normal'];

export interface DevServerOptions {
  /** Path of the temporal CLI; default: `obtainTemporalCli()` (finds or installs it). */
  cliPath?: string;
  /** gRPC port on 127.0.0.1. */
  port: number;
  /** Web UI port; ignored when `headless`. Default: port + 1000 (the CLI's default). */
  uiPort?: number;
  headless?: boolean;
  /** The Web UI's remote codec endpoint (`--ui-codec-endpoint`; `provision codec-server`, src/codec/server.ts). */
  uiCodecEndpoint?: string;
  /** SQLite file; the server's state survives restarts on the same file. */
  dbFile: string;
  /** `PRAGMA=VALUE` for the SQLite file (default DEFAULT_SQLITE_PRAGMAS). */
  sqlitePragmas?: readonly string[];
  namespace?: string;
  /** Server output goes here (appended); default: kept in memory for error messages. */
  logFile?: string;
  logFormat?: 'json' | 'pretty';
  /** Run in its own process group, not tied to this process (the embedded daemon). */
  detached?: boolean;
  /** How long to wait for health. Default 60 s. */
  healthTimeoutMs?: number;
  /** Called with the server's pid as soon as it is spawned, before the health wait (to record it). */
  onSpawn?: (pid: number) => void;
  /** Aborting it during the health wait stops the server and rejects with the abort reason. */
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** `KEY=VALUE` dynamic-config values (`--dynamic-config-value`; VALUE is JSON, e.g. `matching.numTaskqueueReadPartitions=1`). */
  dynamicConfig?: readonly string[];
}

export interface DevServer {
  /** `127.0.0.1:<port>` */
  address: string;
  namespace: string;
  /** `http://localhost:<uiPort>`, absent when headless. */
  uiUrl?: string;
  pid: number;
  /** SIGTERM, then SIGKILL after a bound; resolves when the process is gone. */
  stop(): Promise<void>;
}

/**
 * True when a Temporal frontend answers at `address` (getSystemInfo) and, if given, knows
 * `namespace`.
 */
export async function isTemporalHealthy(address: string, namespace?: string, timeoutMs = 2_000): Promise<boolean> {
  let conn: Connection | undefined;
  try {
    conn = await Connection.connect({ address, connectTimeout: timeoutMs });
    const deadline = new Date(Date.now() + timeoutMs);
    await conn.withDeadline(deadline, () => conn!.workflowService.getSystemInfo({}));
    if (namespace) await conn.withDeadline(deadline, () => conn!.workflowService.describeNamespace({ namespace }));
    return true;
  } catch {
    return false;
  } finally {
    await conn?.close().catch(() => undefined);
  }
}

/** Sends SIGTERM (to the group when `group`), then SIGKILL after `graceMs`; waits until gone. */
export async function terminate(pid: number, { graceMs = 10_000, group = false } = {}): Promise<void> {
  const target = group ? -pid : pid;
  const send = (sig: NodeJS.Signals): void => {
    try {
      process.kill(target, sig);
    } catch {
      // Already gone, or (a server adopted by its database file) not a group leader: the process alone.
      if (group) {
        try {
          process.kill(pid, sig);
        } catch {
          // Already gone.
        }
      }
    }
  };
  if (!pidAlive(pid)) return;
  send('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pidAlive(pid) && Date.now() < deadline) await sleep(100);
  if (!pidAlive(pid)) return;
  send('SIGKILL');
  const killDeadline = Date.now() + 5_000;
  while (pidAlive(pid) && Date.now() < killDeadline) await sleep(50);
}

/** The `temporal server start-dev` arguments for these options. */
export function devServerArgs(o: DevServerOptions): string[] {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(o.port), '--db-filename', o.dbFile];
  if (o.namespace && o.namespace !== 'default') args.push('--namespace', o.namespace);
  if (o.headless) args.push('--headless');
  else args.push('--ui-port', String(o.uiPort ?? o.port + 1000));
  if (o.uiCodecEndpoint && !o.headless) args.push('--ui-codec-endpoint', o.uiCodecEndpoint);
  args.push('--log-format', o.logFormat ?? 'json', '--log-level', 'warn');
  for (const name of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${name}=Keyword`);
  for (const p of o.sqlitePragmas ?? DEFAULT_SQLITE_PRAGMAS) args.push('--sqlite-pragma', p);
  for (const v of o.dynamicConfig ?? []) args.push('--dynamic-config-value', v);
  return args;
}

/** Starts a dev server and resolves once it answers gRPC and knows the namespace. */
export async function startDevServer(o: DevServerOptions): Promise<DevServer> {
  const namespace = o.namespace ?? 'default';
  const address = `127.0.0.1:${o.port}`;
  const cliPath = o.cliPath ?? (await obtainTemporalCli({ env: o.env })).path;
  fs.mkdirSync(path.dirname(o.dbFile), { recursive: true });
  let logFd: number | undefined;
  if (o.logFile) {
    fs.mkdirSync(path.dirname(o.logFile), { recursive: true });
    logFd = fs.openSync(o.logFile, 'a');
  }
  const child = spawn(cliPath, devServerArgs({ ...o, namespace }), {
    env: o.env ?? process.env,
    detached: o.detached ?? false,
    stdio: ['ignore', logFd ?? (o.detached ? 'ignore' : 'pipe'), logFd ?? (o.detached ? 'ignore' : 'pipe')],
  });
  if (logFd !== undefined) fs.closeSync(logFd);
  let tail = '';
  const keep = (d: Buffer): void => {
    tail = (tail + d.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: string | undefined;
  child.once('exit', (code, sig) => (exited = `exited (code ${code ?? '-'}, signal ${sig ?? '-'})`));
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  spawnError.catch(() => undefined);
  const pid = child.pid;
  if (pid === undefined) await spawnError;

  // Not detached: never leave the server behind when this process exits.
  const onExit = (): void => {
    try {
      process.kill(pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  if (!o.detached) process.on('exit', onExit);
  else child.unref();

  let stopped: Promise<void> | undefined;
  const server: DevServer = {
    address,
    namespace,
    uiUrl: o.headless ? undefined : `http://localhost:${o.uiPort ?? o.port + 1000}`,
    pid: pid!,
    stop: () => {
      stopped ??= terminate(pid!).then(() => {
        process.off('exit', onExit);
      });
      return stopped;
    },
  };

  try {
    o.onSpawn?.(pid!);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const deadline = Date.now() + (o.healthTimeoutMs ?? 60_000);
  while (Date.now() < deadline && !o.signal?.aborted) {
    if (exited) break;
    if (await isTemporalHealthy(address, namespace)) return server;
    await sleep(250);
  }
  await server.stop();
  if (o.signal?.aborted) throw o.signal.reason;
  const where = o.logFile ? `see ${o.logFile}` : `output:\n${tail.trim()}`;
  throw new Error(`temporal dev server on ${address} ${exited ?? `did not become healthy within ${(o.healthTimeoutMs ?? 60_000) / 1000}s`}; ${where}`);
}
