/**
 * The package as a new user installs it: `npm pack` (prepack builds dist/ and the prebuilt
 * workflow bundles), `npm install <tarball>` into an empty directory (offline-first: only the npm
 * registry is reachable), then `npx provision start/status/down` on the embedded default with the
 * local cloud, `require('gpuprov')`, and `provision worker` — all from the installed package.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countLive } from '../../src/providers/local';
import { freePort } from '../../src/ports';
import { WORKER_READY_TEXT } from '../../src/server/worker-ready';
import { requireServer, requireTool } from '../harness/temporal';

const execFileP = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const NPM_TIMEOUT_MS = 15 * 60_000;

interface Ran {
  code: number;
  out: string;
  err: string;
}

async function run(cmd: string, args: string[], o: { cwd: string; env: NodeJS.ProcessEnv; timeout?: number }): Promise<Ran> {
  try {
    const r = await execFileP(cmd, args, { cwd: o.cwd, env: o.env, timeout: o.timeout ?? 240_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string; message?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? x.message ?? '' };
  }
}

/** Key lines for the log: the ones that say what happened. */
const show = (label: string, text: string, pick: RegExp): void => {
  const lines = text.split('\n').filter((l) => pick.test(l));
  process.stdout.write(`[package] ${label}\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
};

describe.skipIf(!requireServer() || !requireTool('sshd', existsSync('/usr/sbin/sshd'), 'apt-get install -y openssh-server'))(
  'the packed package, installed into an empty directory',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuprov-package-'));
    const app = join(dir, 'app');
    const home = join(dir, 'home');
    const state = join(dir, 'state');
    const cache = join(dir, 'cache');
    const cloudRoot = join(home, '.local', 'state', 'gpuprov', 'local-cloud'); // the local cloud's default root, under HOME
    let files: string[] = [];
    let env: NodeJS.ProcessEnv;
    // npm keeps the machine's own HOME (its cache has every dependency); provision gets a fresh one.
    const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
    const provision = (...args: string[]): Promise<Ran> => run('npx', ['provision', ...args], { cwd: app, env });

    beforeAll(
      async () => {
        const pack = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, env: npmEnv, timeout: NPM_TIMEOUT_MS });
        expect(pack.code, pack.err).toBe(0);
        const [info] = JSON.parse(pack.out.slice(pack.out.indexOf('['))) as { filename: string; size: number; files: { path: string }[] }[];
        files = info!.files.map((f) => f.path);
        process.stdout.write(`[package] npm pack: ${info!.filename}, ${files.length} files, ${(info!.size / 1e6).toFixed(1)} MB\n`);

        mkdirSync(app);
        writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'gpuprov-package-test', private: true }));
        const install = await run('npm', ['install', '--prefer-offline', join(dir, info!.filename)], { cwd: app, env: npmEnv, timeout: NPM_TIMEOUT_MS });
        expect(install.code, install.err).toBe(0);
        show('npm install', install.out, /added/);

        mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
        env = {
          PATH: process.env.PATH,
          HOME: home,
          GPUPROV_STATE_DIR: state,
          GPUPROV_CACHE_DIR: cache,
          TEMPORAL_CLI_PATH: inject('temporalCliPath'),
          GPUPROV_EMBEDDED_PORT: String(await freePort()),
          GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
          npm_config_update_notifier: 'false',
        };
      },
      2 * NPM_TIMEOUT_MS + 60_000,
    );

    afterAll(async () => {
      if (!env) return;
      const stop = await provision('server', 'stop');
      show('provision server stop', stop.out, /./);
      expect(countLive(cloudRoot)).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }, 120_000);

    it('ships only what runs: compiled JS, the prebuilt bundles, bin, the installer script; no tests, benches or histories', () => {
      expect(files.filter((f) => /^(test|bench|src)\//.test(f) || f.includes('histories/'))).toEqual([]);
      for (const f of [
        'bin/provision.js',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/src/worker.js',
        'dist/src/k3s/install-k3s.sh',
        'dist/workflow-bundle.js',
      ])
        expect(files).toContain(f);
      expect(existsSync(join(app, 'node_modules', 'tsx')), 'tsx is a dev dependency only').toBe(false);
    });

    it('require("gpuprov") gives the typed client', async () => {
      const r = await run(process.execPath, ['-e', "const g = require('gpuprov'); console.log(typeof g.GpuprovClient, typeof g.connect, g.TASK_QUEUE)"], {
        cwd: app,
        env,
      });
      expect(r.code, r.err).toBe(0);
      expect(r.out.trim()).toBe('function function gpuprov');
      show('node -e "require(\'gpuprov\')"', r.out, /./);
    });

    it('npx provision start → status → down on the embedded default, with a worker running dist/ and the prebuilt bundle', async () => {
      const start = await provision('start', '--name', 'gpu1');
      expect(start.code, start.err + start.out).toBe(0);
      show('npx provision start --name gpu1', start.err + start.out, /started the embedded default|gpu1: ready|is ready|^ssh /);
      expect(start.out).toContain('gpu1 is ready');
      expect(countLive(cloudRoot)).toBe(1);

      const workerPid = readFileSync(join(state, 'run', 'worker.pid'), 'utf8').trim();
      const cmdline = readFileSync(`/proc/${workerPid}/cmdline`, 'utf8').split('\0').join(' ');
      expect(cmdline).toContain(join('node_modules', 'gpuprov', 'dist', 'src', 'worker.js'));
      expect(cmdline).not.toContain('tsx');
      // The prebuilt bundle was used: nothing was bundled into the cache.
      expect(existsSync(join(cache, 'bundles'))).toBe(false);

      const status = await provision('status', 'gpu1');
      expect(status.code, status.err).toBe(0);
      expect(status.out).toMatch(/stage\s+ready/);
      show('npx provision status gpu1', status.out, /^(name|stage|where)\s/);

      // The library, as another service would use it: connect() as the CLI connects, then the typed client.
      const lib = await run(
        process.execPath,
        ['-e', "require('gpuprov').connect().then(async (c) => { console.log((await c.status('gpu1')).stage); await c.temporal.connection.close(); })"],
        { cwd: app, env },
      );
      expect(lib.code, lib.err).toBe(0);
      expect(lib.out.trim()).toBe('ready');
      show("require('gpuprov').connect() → status('gpu1').stage", lib.out, /./);

      const down = await provision('down', 'gpu1');
      expect(down.code, down.err).toBe(0);
      show('npx provision down gpu1', down.out + down.err, /gone|terminated/);
      expect(countLive(cloudRoot)).toBe(0);
    }, 600_000);

    it('npx provision worker --help, and provision worker polls until SIGTERM, then exits 0', async () => {
      const help = await provision('worker', '--help');
      expect(help.code, help.err).toBe(0);
      expect(help.out).toContain('usage: provision worker');
      show('npx provision worker --help', help.out, /^(provision worker|usage)/);

      await provision('server', 'start'); // the embedded server, for this worker to poll
      const child = spawn(process.execPath, [join(app, 'node_modules', '.bin', 'provision'), 'worker'], {
        cwd: app,
        env: { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${env.GPUPROV_EMBEDDED_PORT}`, GPUPROV_TASK_QUEUE: 'package-test' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      for (let i = 0; i < 1_500 && !out.includes(WORKER_READY_TEXT) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 200));
      expect(out).toContain(WORKER_READY_TEXT);
      child.kill('SIGTERM');
      expect(await exited, out).toBe(0);
      show('npx provision worker (SIGTERM after it polled)', out, /polling task queue/);
    }, 600_000);
  },
);
