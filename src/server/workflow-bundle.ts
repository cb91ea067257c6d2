/**
 * gpuprov's workflow code, bundled once and kept on disk. `Worker.create({ workflowsPath })` runs
 * webpack inside the worker process (~200 MB of RSS that stays, ~13 s of CPU on every start);
 * instead the bundle (`bundleWorkflowCode` output) is built in a child process and cached under
 * `<cacheDir>/bundles/<key>.js`, the key a hash of everything that can change it: every source
 * file under `src/`, package-lock.json and the installed Temporal SDK versions. Workers, the
 * bench and test harnesses on one machine share it; a source change simply makes a new key.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheDir } from '../paths';
import { withLock } from './lock';

/** Bump when the build itself changes (bundler options, the child's script). */
const FORMAT = 'gpuprov-workflow-bundle-2';

/** Files whose contents the bundle may include: code and JSON (not .d.ts, maps or protos). */
const SOURCE = /(?<!\.d)\.(?:[cm]?[jt]s|json)$/;

/**
 * Builds the bundle of `workflowsPath` with the workflow interceptor modules `interceptorModules`
 * into `outFile` (which must not be read before it resolves).
 */
export type BundleBuilder = (workflowsPath: string, outFile: string, interceptorModules: readonly string[]) => Promise<void>;

export interface WorkflowBundleOptions {
  /** Where the cache lives: `cacheDir(env)/bundles` (GPUPROV_CACHE_DIR, else ~/.cache/gpuprov). */
  env?: NodeJS.ProcessEnv;
  /** The source tree hashed into the key. Default: this package's `src` (or `dist/src` when built). */
  srcDir?: string;
  /** The workflows module bundled. Default: `<srcDir>/workflows/index.ts` (`.js` when built). */
  workflowsPath?: string;
  /** Hashed into the key when it exists. Default: `package-lock.json` of the package holding `srcDir`. */
  lockFile?: string;
  /**
   * Workflow interceptor modules bundled with the workflows (files; part of the key). Default:
   * {@link defaultInterceptorModules} (gpuprov's log attributes).
   */
  interceptorModules?: readonly string[];
  /** How to build on a cache miss. Default: {@link buildInChildProcess}. */
  build?: BundleBuilder;
  /** Told when a build starts (it takes a while). */
  log?: (line: string) => void;
}

/**
 * `src/workflows` as a file: `index.ts` in a checkout, `index.js` when built. (Not
 * `require.resolve`, which does not know `.ts` under vitest.)
 */
export function defaultWorkflowsPath(srcDir = path.join(__dirname, '..')): string {
  const ts = path.join(srcDir, 'workflows', 'index.ts');
  return fs.existsSync(ts) ? ts : path.join(srcDir, 'workflows', 'index.js');
}

/**
 * gpuprov's own workflow interceptor modules, in every bundle: `<srcDir>/workflows/log-attributes`
 * (names the VM and cloud on workflow log lines).
 */
export function defaultInterceptorModules(srcDir = path.join(__dirname, '..')): string[] {
  const ts = path.join(srcDir, 'workflows', 'log-attributes.ts');
  return [fs.existsSync(ts) ? ts : path.join(srcDir, 'workflows', 'log-attributes.js')];
}

/**
 * The bundles `npm run build` (scripts/build-package.ts) writes beside `dist/src`: gpuprov's
 * workflows with {@link defaultInterceptorModules}, and with the OpenTelemetry workflow module too.
 */
export const PREBUILT_BUNDLES = { plain: 'workflow-bundle.js', tracing: 'workflow-bundle-otel.js' } as const;

/**
 * The prebuilt bundle of a built package (`dist/src/..`), when there is one: `undefined` when
 * running from the sources (a checkout under tsx has no bundle beside `src/`, so an old build left
 * by `npm pack` is never used for newer sources).
 */
export function prebuiltWorkflowBundle(tracing: boolean, srcDir = path.join(__dirname, '..')): string | undefined {
  if (fs.existsSync(path.join(srcDir, 'workflows', 'index.ts'))) return undefined;
  const file = path.join(srcDir, '..', tracing ? PREBUILT_BUNDLES.tracing : PREBUILT_BUNDLES.plain);
  return fs.existsSync(file) ? file : undefined;
}

/** Every source file under `dir`, as paths relative to it, sorted (stable across machines). */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && SOURCE.test(e.name)) out.push(p);
    }
  };
  walk('');
  return out.sort();
}

/** The package root above `srcDir` (`src/..` in a checkout, `dist/src/../..` when built). */
function packageRoot(srcDir: string): string {
  for (let d = path.dirname(srcDir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return d;
    if (path.dirname(d) === d) return path.dirname(srcDir);
  }
}

/** The installed version of a package, or 'none'. */
function installedVersion(name: string): string {
  try {
    return (JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version?: string }).version ?? 'none';
  } catch {
    return 'none';
  }
}

/**
 * The cache key (hex) of a bundle: the format, the Temporal SDK versions, package-lock.json, the
 * workflows module's path within `srcDir` and every source file under `srcDir` (path and bytes).
 */
export function workflowBundleKey(o: Pick<WorkflowBundleOptions, 'srcDir' | 'workflowsPath' | 'lockFile' | 'interceptorModules'> = {}): string {
  const srcDir = o.srcDir ?? path.join(__dirname, '..');
  const h = createHash('sha256');
  const part = (label: string, data: string | Buffer): void => {
    h.update(`${label}\0${Buffer.byteLength(data)}\0`);
    h.update(data);
  };
  part('format', FORMAT);
  for (const pkg of ['@temporalio/worker', '@temporalio/workflow', '@temporalio/common']) part(pkg, installedVersion(pkg));
  const lockFile = o.lockFile ?? path.join(packageRoot(srcDir), 'package-lock.json');
  part('package-lock.json', fs.existsSync(lockFile) ? fs.readFileSync(lockFile) : 'absent');
  part('workflows', path.relative(srcDir, o.workflowsPath ?? defaultWorkflowsPath(srcDir)));
  // Relative to the package, so that checkouts elsewhere share keys (the packages' versions are in the lock file).
  const root = packageRoot(srcDir);
  for (const m of o.interceptorModules ?? defaultInterceptorModules(srcDir)) part('interceptor', path.relative(root, m));
  for (const rel of sourceFiles(srcDir)) part(rel, fs.readFileSync(path.join(srcDir, rel)));
  return h.digest('hex').slice(0, 32);
}

/** What the child process runs: plain JavaScript, so it needs neither tsx nor this file. */
const CHILD_SCRIPT = `
const [workerModule, workflowsPath, outFile, modules] = process.argv.slice(1);
const { bundleWorkflowCode, DefaultLogger } = require(workerModule);
bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: JSON.parse(modules), logger: new DefaultLogger('WARN') })
  .then(({ code }) => require('node:fs').writeFileSync(outFile, code))
  .catch((err) => { process.stderr.write(String(err && err.stack || err) + '\\n'); process.exit(1); });
`;

/**
 * Runs `bundleWorkflowCode` (webpack) in a separate node process that writes `outFile` and
 * exits, so none of webpack's memory stays in the caller. Rejects with the child's stderr.
 */
export function buildInChildProcess(workflowsPath: string, outFile: string, interceptorModules: readonly string[] = [], timeoutMs = 5 * 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['-e', CHILD_SCRIPT, require.resolve('@temporalio/worker'), workflowsPath, outFile, JSON.stringify(interceptorModules)],
      {
        cwd: path.dirname(workflowsPath),
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`bundling the workflow code failed (${signal ?? `exit ${code}`}):\n${err.trim()}`));
    });
  });
}

const inFlight = new Map<string, Promise<string>>();

/**
 * The path of gpuprov's workflow bundle, for `buildWorker` (src/worker.ts; its default): the cached
 * file when its key matches, else built once (in a child process) and cached. Safe to call from
 * several processes at once: one builds under a lock file, the others wait for it, and the bundle
 * appears by rename, complete or not at all.
 */
export async function workflowBundlePath(o: WorkflowBundleOptions = {}): Promise<string> {
  const srcDir = o.srcDir ?? path.join(__dirname, '..');
  const workflowsPath = o.workflowsPath ?? defaultWorkflowsPath(srcDir);
  const dir = path.join(cacheDir(o.env ?? process.env), 'bundles');
  const interceptorModules = o.interceptorModules ?? defaultInterceptorModules(srcDir);
  const file = path.join(dir, `${workflowBundleKey({ srcDir, workflowsPath, lockFile: o.lockFile, interceptorModules })}.js`);
  let pending = inFlight.get(file);
  if (!pending) {
    pending = ensureBundle(file, workflowsPath, interceptorModules, o).finally(() => inFlight.delete(file));
    inFlight.set(file, pending);
  }
  return pending;
}

async function ensureBundle(file: string, workflowsPath: string, interceptorModules: readonly string[], o: WorkflowBundleOptions): Promise<string> {
  if (fs.existsSync(file)) return touched(file);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return withLock(
    `${file}.lock`,
    async () => {
      if (fs.existsSync(file)) return touched(file); // another process built it while we waited
      o.log?.(`bundling the workflow code (once per source change) into ${file}`);
      const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      try {
        await (o.build ?? buildInChildProcess)(workflowsPath, tmp, interceptorModules);
        if (!(fs.statSync(tmp, { throwIfNoEntry: false })?.size ?? 0)) throw new Error(`bundling the workflow code wrote nothing to ${tmp}`);
        fs.renameSync(tmp, file);
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      pruneOld(path.dirname(file));
      return file;
    },
    10 * 60_000,
  );
}

/** Marks a bundle as used (its mtime is its last use, for {@link pruneOld}). */
function touched(file: string): string {
  try {
    const now = new Date();
    fs.utimesSync(file, now, now);
  } catch {
    // read-only cache: still usable
  }
  return file;
}

const DAY_MS = 24 * 3_600_000;

/**
 * Removes bundles unused for two weeks (left by older checkouts; a running worker has read its
 * bundle already) and day-old temp and lock files of builds that were killed.
 */
function pruneOld(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const maxAgeMs = name.endsWith('.js') ? 14 * DAY_MS : name.endsWith('.tmp') || name.endsWith('.lock') ? DAY_MS : undefined;
    const p = path.join(dir, name);
    const st = maxAgeMs === undefined ? undefined : fs.statSync(p, { throwIfNoEntry: false });
    if (st && maxAgeMs !== undefined && Date.now() - st.mtimeMs > maxAgeMs) fs.rmSync(p, { force: true });
  }
}

/** The sha256 of a bundle file (hex): the replay gate's last-good mark and the build id's suffix. */
export function bundleHash(bundlePath: string): string {
  return createHash('sha256').update(fs.readFileSync(bundlePath)).digest('hex');
}
