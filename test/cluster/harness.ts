/**
 * A production-topology Temporal cluster for tests: PostgreSQL (postgres.ts), the schema made by
 * scripts/temporal/setup-schema.sh, the real server (temporal-server v1.31.0, its built-in config
 * template fed the same variables as docker-compose.temporal.yml) run as four processes —
 * frontend, history, matching, worker — on free 127.0.0.1 ports, and the namespace and search
 * attributes registered by scripts/temporal/setup-namespace.sh. A test may kill and restart any
 * service. Every wait is bounded.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { terminate } from '../../src/server/dev-server';
import type { ClusterBinaries } from './binaries';
import { listening, servicePorts } from './ports';
import { startPostgres, type Postgres } from './postgres';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const SCRIPTS = path.join(ROOT, 'scripts', 'temporal');

export const SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface ClusterOptions {
  bins: ClusterBinaries;
  /** The temporal CLI, which setup-namespace.sh drives. */
  temporalCli: string;
  namespace?: string;
  /**
   * History shards; default 512, as docker-compose.temporal.yml. Measured here: the cluster
   * serves ~2 s later than with 16 and idles at ~7% of a core (history ~250 MB RSS).
   */
  shards?: number;
  /** How long to wait for the cluster to serve, and for the namespace. Default 240 s. */
  readyTimeoutMs?: number;
  /**
   * Dynamic configuration (YAML) for this cluster only, instead of docker/temporal/dynamicconfig.yaml:
   * for a suite that must shorten a server period (it says which and why). Default: the shared file.
   */
  dynamicConfigYaml?: string;
}

export interface TemporalCluster {
  /** The frontend, `127.0.0.1:<port>`. */
  address: string;
  namespace: string;
  dir: string;
  /** Sends `signal` (default SIGKILL) to the service(s) and waits for them to exit. */
  kill(which: ServiceName | 'all', signal?: NodeJS.Signals): Promise<void>;
  /** Starts the service(s) again on the same ports (does not wait for them to serve). */
  restart(which: ServiceName | 'all'): Promise<void>;
  /**
   * Waits until history answers through the frontend (a lookup of a workflow that does not exist
   * comes back NotFound, not Unavailable); resolves with the time it first did (Date.now()).
   */
  waitServing(timeoutMs?: number): Promise<number>;
  /** Process ids of the running services (PostgreSQL not included). */
  pids(): number[];
  /** The last lines a service logged. */
  logTail(service: ServiceName, bytes?: number): string;
  /** Stops every service and PostgreSQL and removes the directory (kept with GPUPROV_KEEP_CLUSTER=1). */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** Runs a script of scripts/temporal with `env` (and PATH); its output is returned for error messages. */
async function script(name: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  try {
    const r = await run('sh', [path.join(SCRIPTS, name)], { env: { PATH: process.env.PATH, ...env }, timeout: timeoutMs, killSignal: 'SIGKILL' });
    return r.stdout + r.stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`scripts/temporal/${name} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.slice(0, 4_000), { cause: err });
  }
}

function tailOf(file: string, bytes: number): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-bytes);
  } catch {
    return '';
  }
}

/** A service's fatal and error lines as `msg: error` (its JSON log's stack traces left out), else its tail. */
function whyOf(file: string): string {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const why = text.split('\n').flatMap((line) => {
    try {
      const l = JSON.parse(line) as { level?: string; msg?: string; error?: string };
      return l.level === 'fatal' || l.level === 'error' ? [`${l.level}: ${l.msg ?? ''}${l.error ? `: ${l.error}` : ''}`] : [];
    } catch {
      return [];
    }
  });
  return why.length ? why.slice(-5).join('\n') : text.slice(-2_000);
}

/** The shared dynamic configuration file, or `yaml` written into the cluster's directory. */
function dynamicConfigFile(dir: string, yaml: string | undefined): string {
  if (yaml === undefined) return path.join(ROOT, 'docker', 'temporal', 'dynamicconfig.yaml');
  const file = path.join(dir, 'dynamicconfig.yaml');
  fs.writeFileSync(file, yaml);
  return file;
}

/** A start that failed because another process took one of the picked ports first. */
class PortTaken extends Error {}

/**
 * PostgreSQL, schema, four server processes, namespace: see the module comment. Other test files
 * pick ports in the same range, and one may bind a picked port before its service does: such a
 * start is thrown away and tried again on fresh ports, at most three times.
 */
export async function startCluster(o: ClusterOptions): Promise<TemporalCluster> {
  for (let tries = 1; ; tries++) {
    try {
      return await startClusterOnce(o);
    } catch (err) {
      if (!(err instanceof PortTaken) || tries >= 3) throw err;
      console.warn(`cluster start ${tries} lost a port to another process; trying again on fresh ports:\n${err.message}`);
    }
  }
}

async function startClusterOnce(o: ClusterOptions): Promise<TemporalCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-cluster-'));
  const namespace = o.namespace ?? 'default';
  const readyMs = o.readyTimeoutMs ?? 240_000;
  const procs = new Map<ServiceName, ChildProcess>();
  let pg: Postgres | undefined;

  const stopAll = async (): Promise<void> => {
    await Promise.all(
      [...procs.values()].map(async (c) => {
        if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) await terminate(c.pid, { graceMs: 15_000 });
      }),
    );
    procs.clear();
    await pg?.stop();
    if (process.env.GPUPROV_KEEP_CLUSTER !== '1') fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    pg = await startPostgres(o.bins, dir);
    const db = { DB: 'postgres12', POSTGRES_SEEDS: pg.host, DB_PORT: String(pg.port), POSTGRES_USER: pg.user, POSTGRES_PWD: pg.password };
    await script('setup-schema.sh', { ...db, TEMPORAL_SQL_TOOL: o.bins.sqlTool, TEMPORAL_SCHEMA_DIR: o.bins.schemaDir }, 180_000);

    const ports = await servicePorts(SERVICES);
    const address = `127.0.0.1:${ports.FRONTEND_GRPC_PORT}`;
    const serverEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...db,
      ...ports,
      BIND_ON_IP: '127.0.0.1',
      NUM_HISTORY_SHARDS: String(o.shards ?? 512),
      DYNAMIC_CONFIG_FILE_PATH: dynamicConfigFile(dir, o.dynamicConfigYaml),
      LOG_LEVEL: process.env.GPUPROV_CLUSTER_LOG_LEVEL || 'warn',
      TEMPORAL_ALLOW_NO_AUTH: 'true',
    };
    const logOf = (s: ServiceName): string => path.join(dir, `${s}.log`);
    const startService = (s: ServiceName): void => {
      const fd = fs.openSync(logOf(s), 'a');
      const child = spawn(o.bins.temporalServer, ['start', '--service', s], { env: serverEnv, cwd: dir, stdio: ['ignore', fd, fd] });
      fs.closeSync(fd);
      child.on('error', () => undefined); // shows as an exited process and in waitServing's timeout
      live.add(child);
      child.once('exit', () => live.delete(child));
      procs.set(s, child);
    };
    const which = (w: ServiceName | 'all'): ServiceName[] => (w === 'all' ? [...SERVICES] : [w]);

    const waitServing = async (timeoutMs = readyMs): Promise<number> => {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      while (Date.now() < deadline) {
        let conn: Connection | undefined;
        try {
          conn = await Connection.connect({ address, connectTimeout: 2_000 });
          await conn.workflowService.getWorkflowExecutionHistory({ namespace, execution: { workflowId: 'gpuprov-cluster-probe-none' } });
          return Date.now();
        } catch (err) {
          const code = (err as { code?: number }).code;
          if (code === GrpcStatus.NOT_FOUND) return Date.now();
          last = (err as Error).message;
        } finally {
          await conn?.close().catch(() => undefined);
        }
        await sleep(250);
      }
      throw new Error(`the cluster at ${address} did not serve within ${timeoutMs} ms (${last}); frontend log:\n${tailOf(logOf('frontend'), 1_500)}`);
    };

    // A service that exits while the cluster comes up fails the start at once, with its log.
    let failStartup: (err: Error) => void = () => undefined;
    const died = new Promise<never>((_, reject) => (failStartup = reject));
    died.catch(() => undefined);
    const watching = new Map<ChildProcess, () => void>();
    const startWatched = (s: ServiceName): void => {
      startService(s);
      const child = procs.get(s)!;
      const onExit = (): void => {
        const why = whyOf(logOf(s));
        const Failure = why.includes('address already in use') ? PortTaken : Error;
        failStartup(new Failure(`temporal-server --service ${s} exited while starting:\n${why}`));
      };
      child.once('exit', onExit);
      watching.set(child, onExit);
    };
    // On a fresh database the services race to write the cluster metadata (the loser exits with
    // "failed to initialize current cluster metadata"): history first, the others once it listens.
    startWatched('history');
    await Promise.race([listening(Number(ports.HISTORY_GRPC_PORT), readyMs), died]);
    for (const s of SERVICES) if (s !== 'history') startWatched(s);
    const setup = script(
      'setup-namespace.sh',
      { TEMPORAL_ADDRESS: address, NAMESPACE: namespace, TEMPORAL_CLI: o.temporalCli, SETUP_WAIT_SECONDS: String(Math.round(readyMs / 1000)), HOME: dir },
      readyMs + 30_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nhistory log:\n${tailOf(logOf('history'), 1_500)}\nfrontend log:\n${tailOf(logOf('frontend'), 1_500)}`);
    });
    setup.catch(() => undefined); // raced below; not unhandled when a dead service wins
    const setupOut = await Promise.race([setup, died]);
    for (const [child, onExit] of watching) child.off('exit', onExit);
    if (!setupOut.includes('is ready')) throw new Error(`setup-namespace.sh did not report readiness:\n${setupOut}`);
    await waitServing();

    return {
      address,
      namespace,
      dir,
      pids: () => [...procs.values()].flatMap((c) => (c.pid !== undefined && c.exitCode === null ? [c.pid] : [])),
      kill: async (w, signal = 'SIGKILL') => {
        await Promise.all(
          which(w).map(async (s) => {
            const c = procs.get(s);
            if (!c || c.exitCode !== null || c.signalCode !== null) return;
            const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
            c.kill(signal);
            await exited;
          }),
        );
      },
      restart: async (w) => {
        for (const s of which(w)) {
          const c = procs.get(s);
          if (c && c.exitCode === null && c.signalCode === null) throw new Error(`${s} is still running (pid ${c.pid})`);
          startService(s);
        }
      },
      waitServing,
      logTail: (s, bytes = 2_000) => tailOf(logOf(s), bytes),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw err;
  }
}
