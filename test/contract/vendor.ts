/**
 * The vendors' published Python clients: found in the cached venv `.ci/run` builds from
 * test/contract/requirements.txt, and run as one driver script per cloud (test/contract/<cloud>.py)
 * that reads its input as JSON on stdin and prints one JSON line of results.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RecordedRequest } from '../fixtures/http-fixture';

export const CONTRACT_DIR = resolve(__dirname);
const INSTALL = 'bash .ci/run installs it (python3 -m venv $CACHE/venv-vendors && pip install -r test/contract/requirements.txt)';

/** The venv's python: GPUPROV_VENDOR_PYTHON, else `<cache>/venv-vendors/bin/python`. */
export function vendorPython(): string {
  const cache = process.env.GPUPROV_CACHE_DIR ?? join(process.env.HOME ?? '/root', '.cache/gpuprov');
  return process.env.GPUPROV_VENDOR_PYTHON ?? join(cache, 'venv-vendors/bin/python');
}

/** True when the suite must be skipped; throws when GPUPROV_REQUIRE_ALL=1 demands the venv. */
export function vendorsMissing(): boolean {
  if (existsSync(vendorPython())) return false;
  if (process.env.GPUPROV_REQUIRE_ALL === '1') throw new Error(`GPUPROV_REQUIRE_ALL=1: the vendor client venv is missing at ${vendorPython()}: ${INSTALL}`);
  process.stderr.write(`skipping test/contract: no vendor client venv at ${vendorPython()} (${INSTALL})\n`);
  return true;
}

/** The pinned version of `pkg` in requirements.txt (what the suite says it checked against). */
export function pinned(pkg: string): string {
  const line = readFileSync(join(CONTRACT_DIR, 'requirements.txt'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${pkg}==`));
  return line ? line.slice(pkg.length + 2).trim() : 'unpinned';
}

export interface DriverCall {
  call: string;
  ok: boolean;
  error?: string;
  skipped?: string;
}

export interface DriverResult {
  client: string;
  version: string;
  calls: DriverCall[];
  notes: string[];
}

/** A recorded request without its headers (they carry the fixture's test credentials). */
export const bare = (r: RecordedRequest): Omit<RecordedRequest, 'headers'> => ({ method: r.method, path: r.path, query: r.query, body: r.body });

/**
 * Run `script` (a file in test/contract) with `input` on stdin, under an empty HOME and with no
 * proxy, so no credentials or settings of this machine reach the vendor's client.
 */
export async function runDriver(script: string, input: unknown): Promise<DriverResult> {
  return (await runJson(script, input)) as DriverResult;
}

/** Run `script` like a driver (see runDriver) and return its last stdout line, parsed as JSON. */
export async function runJson(script: string, input: unknown): Promise<unknown> {
  const home = mkdtempSync(join(tmpdir(), 'gpuprov-contract-'));
  try {
    // `-P` and the appended path: a driver named after its cloud (vastai.py) must not shadow the vendor's package.
    const run = `import runpy, sys; sys.path.append(${JSON.stringify(CONTRACT_DIR)}); runpy.run_path(${JSON.stringify(join(CONTRACT_DIR, script))}, run_name='__main__')`;
    const child = spawn(vendorPython(), ['-P', '-c', run], {
      cwd: CONTRACT_DIR,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', NO_PROXY: '*', no_proxy: '*' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.stdin.end(JSON.stringify(input));
    const code = await new Promise<number | null>((ok, fail) => {
      child.once('error', fail);
      child.once('close', ok);
    });
    const last = out.trim().split('\n').at(-1) ?? '';
    if (code !== 0 || !last.startsWith('{')) throw new Error(`${script} exited ${code}: ${err.slice(-2000)}${out.slice(-500)}`);
    return JSON.parse(last) as unknown;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
