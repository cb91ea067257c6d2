/**
 * The cost of `ssh NAME` following the VM: `npx tsx bench/ssh-proxy.ts [--n 10]`. One embedded
 * default in a temporary HOME launches one VM on the local cloud; then `ssh NAME true` through the
 * written entry (its ProxyCommand asks the VM's workflow for the endpoint and host key) and the same
 * ssh straight at the endpoint (same key, same pin, no ProxyCommand) run interleaved N times each.
 * Prints both distributions and the difference of the medians; tears everything down.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../src/ports';
import { obtainTemporalCli } from '../src/server/temporal-cli';
import { dist, round } from './stats';

const ROOT = join(__dirname, '..');
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};

function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = process.hrtime.bigint();
  execFileSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function main(): Promise<void> {
  const n = arg('--n', 10);
  const home = mkdtempSync(join(tmpdir(), 'gpuprov-bench-ssh-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    GPUPROV_STATE_DIR: join(home, 'state'),
    GPUPROV_LOCAL_ROOT: join(home, 'cloud'),
    GPUPROV_EMBEDDED_PORT: String(await freePort()),
    GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
    TEMPORAL_CLI_PATH: (await obtainTemporalCli()).path,
  };
  const provision = (...args: string[]): string => execFileSync(process.execPath, [join(ROOT, 'bin', 'provision.js'), ...args], { env, encoding: 'utf8' });
  try {
    provision('start', '--name', 'bssh');
    const entry = readFileSync(join(home, '.config', 'gpuprov', 'ssh', 'config.d', 'bssh.conf'), 'utf8');
    const field = (k: string): string => new RegExp(`^\\s*${k} (.+)$`, 'm').exec(entry)![1]!.trim();
    const direct = ['-o', 'BatchMode=yes', '-o', `HostKeyAlias=${field('HostKeyAlias')}`, '-o', `UserKnownHostsFile=${field('UserKnownHostsFile')}`];
    direct.push(
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-i',
      field('IdentityFile'),
      '-p',
      field('Port'),
      `${field('User')}@${field('HostName')}`,
      'true',
    );
    const viaProxy: number[] = [];
    const straight: number[] = [];
    for (let i = 0; i < n; i++) {
      viaProxy.push(timed('ssh', ['-F', join(home, '.ssh', 'config'), '-o', 'BatchMode=yes', 'bssh', 'true'], env));
      straight.push(timed('ssh', direct, env));
    }
    const p = dist(viaProxy);
    const d = dist(straight);
    const line = (what: string, x: typeof p): string => `${what}: median ${round(x.median)} ms, p90 ${round(x.p90)} ms`;
    process.stdout.write(`${line('ssh NAME true (ProxyCommand)', p)}\n${line('ssh straight at the endpoint', d)}\n`);
    process.stdout.write(`cost of following the VM per ssh: ${round(p.median - d.median)} ms (median); n=${n}; load average ${loadavg()[0]!.toFixed(2)}\n`);
  } finally {
    try {
      provision('down', 'bssh');
    } finally {
      provision('server', 'stop');
      rmSync(home, { recursive: true, force: true });
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
