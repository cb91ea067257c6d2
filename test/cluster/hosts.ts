/**
 * gpuprov "hosts" for the cluster suite: each has its own HOME and state directory, runs the
 * production worker entry (src/worker.ts, as `npm run worker` does) with TEMPORAL_ADDRESS, and
 * runs the `provision` CLI (bin/provision.js) as its user would. All hosts share one local cloud
 * (GPUPROV_LOCAL_ROOT), the way real hosts share one cloud account.
 *
 * A stand-in `ssh-keygen` first on every worker's PATH lets a test slow down one local-cloud
 * create (the host-key generation inside it) and learn which worker runs it: see `armSlowCreate`.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { WORKER_NODE_FLAGS } from '../../src/server/embedded';
import { terminate } from '../../src/server/dev-server';
import { WORKER_READY_TEXT } from '../../src/server/worker-ready';

const ROOT = path.join(__dirname, '..', '..');

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export interface RunningWorker {
  pid: number;
  output(): string;
  /** Sends `signal` (default SIGKILL) and resolves once the process exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM (graceful shutdown), SIGKILL after 15 s. */
  stop(): Promise<void>;
}

export interface Host {
  name: string;
  home: string;
  stateDir: string;
  worker?: RunningWorker;
  startWorker(): Promise<RunningWorker>;
  provision(...args: string[]): Promise<CliResult>;
}

export interface Site {
  /** The shared local cloud's root. */
  cloudRoot: string;
  /** Directory of the ssh-keygen stand-in's control files. */
  control: string;
  host(name: string): Host;
  /**
   * The next local-cloud create (on whichever worker) sleeps `seconds` before generating its
   * host key; resolves with the pid of the worker running it once it has started.
   */
  armSlowCreate(seconds: number, timeoutMs?: number): { started: Promise<number> };
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** The stand-in: `-t` (key generation, i.e. a create) consumes <control>/slow if present. */
function writeKeygenStandIn(binDir: string, control: string): void {
  const real = execFileSync('sh', ['-c', 'command -v ssh-keygen'], { encoding: 'utf8' }).trim();
  fs.mkdirSync(binDir, { recursive: true });
  fs.writeFileSync(
    path.join(binDir, 'ssh-keygen'),
    `#!/bin/sh
# Test stand-in (test/cluster/hosts.ts): slows one local-cloud create when armed.
ctl='${control}'
case " $* " in
  *" -t "*)
    if mv "$ctl/slow" "$ctl/slow.$$" 2>/dev/null; then
      echo "$PPID" > "$ctl/started.$$" && mv "$ctl/started.$$" "$ctl/started"
      sleep "$(cat "$ctl/slow.$$")"
      rm -f "$ctl/slow.$$"
    fi ;;
esac
exec '${real}' "$@"
`,
    { mode: 0o755 },
  );
}

/** A site under `dir`: the shared cloud, the stand-in, and hosts connected to `address`. */
export function createSite(o: { dir: string; address: string; namespace: string; cacheDir: string; sshKeyFile: string }): Site {
  const cloudRoot = path.join(o.dir, 'cloud');
  const control = path.join(o.dir, 'control');
  const binDir = path.join(o.dir, 'bin');
  fs.mkdirSync(control, { recursive: true });
  writeKeygenStandIn(binDir, control);

  const host = (name: string): Host => {
    const home = path.join(o.dir, name, 'home');
    const stateDir = path.join(o.dir, name, 'state');
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true, mode: 0o700 });
    fs.mkdirSync(stateDir, { recursive: true });
    // Only what a host would set: no credentials of any real cloud leak in from this process.
    const env: NodeJS.ProcessEnv = {
      PATH: `${binDir}:${process.env.PATH ?? ''}`,
      HOME: home,
      GPUPROV_STATE_DIR: stateDir,
      TEMPORAL_ADDRESS: o.address,
      TEMPORAL_NAMESPACE: o.namespace,
      GPUPROV_CLOUDS: 'local',
      GPUPROV_LOCAL_ROOT: cloudRoot,
      // The workflow bundle is a deterministic build of the same sources: shared, not rebuilt per host.
      GPUPROV_CACHE_DIR: o.cacheDir,
      // The deployment SSH identity every worker host shares (README: workers on several hosts).
      GPUPROV_SSH_KEY_FILE: o.sshKeyFile,
    };
    const h: Host = {
      name,
      home,
      stateDir,
      startWorker: () => startWorker(env, path.join(stateDir, 'worker.log')).then((w) => (h.worker = w)),
      provision: (...args) => cli(env, args),
    };
    return h;
  };

  const armSlowCreate = (seconds: number, timeoutMs = 120_000): { started: Promise<number> } => {
    const startedFile = path.join(control, 'started');
    fs.rmSync(startedFile, { force: true });
    fs.writeFileSync(path.join(control, 'slow.tmp'), String(seconds));
    fs.renameSync(path.join(control, 'slow.tmp'), path.join(control, 'slow'));
    const started = (async () => {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const pid = Number(fs.existsSync(startedFile) ? fs.readFileSync(startedFile, 'utf8').trim() : NaN);
        if (Number.isInteger(pid) && pid > 0) return pid;
      }
      throw new Error(`no local-cloud create started within ${timeoutMs} ms`);
    })();
    return { started };
  };

  return { cloudRoot, control, host, armSlowCreate };
}

function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin', 'provision.js'), ...args],
      { env, cwd: ROOT, timeout: 300_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, out: stdout, err: stderr });
      },
    );
  });
}

/** `node --max-old-space-size=512 --import tsx src/worker.ts`, as the embedded daemon runs it. */
async function startWorker(env: NodeJS.ProcessEnv, logFile: string, readyTimeoutMs = 120_000): Promise<RunningWorker> {
  const args = [...WORKER_NODE_FLAGS, '--import', pathToFileURL(require.resolve('tsx')).href, path.join(ROOT, 'src', 'worker.ts')];
  const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  const log = fs.createWriteStream(logFile, { flags: 'a' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    live.delete(child);
    log.end();
  });
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      log.write(d);
      if (out.includes(WORKER_READY_TEXT)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => reject(new Error(`worker exited before polling:\n${out.slice(-3_000)}`)));
    setTimeout(() => reject(new Error(`worker not polling after ${readyTimeoutMs} ms:\n${out.slice(-3_000)}`)), readyTimeoutMs).unref();
  });
  const pid = child.pid;
  try {
    if (pid === undefined) throw new Error('could not spawn the worker');
    await ready;
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  }
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    pid,
    output: () => out,
    kill: async (signal = 'SIGKILL') => {
      if (alive()) child.kill(signal);
      await exited;
    },
    stop: async () => {
      if (alive()) await terminate(pid, { graceMs: 15_000 });
      await exited;
    },
  };
}
