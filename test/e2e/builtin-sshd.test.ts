/**
 * End to end on a machine without OpenSSH's sshd: the CLI runs in a private mount namespace
 * (`unshare -m`) where an empty, non-executable file is bind-mounted over /usr/sbin/sshd, so
 * it and everything it starts in the background (dev server, worker, instances) find no sshd
 * and the local cloud uses the built-in server. Then, as a user would: `provision start`,
 * `ssh gpu1 hostname` through the written ssh config, an interactive `ssh -t gpu1` in tmux,
 * `provision down gpu1`, and nothing of it left running.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countLive } from '../../src/providers/local';
import { freePort } from '../../src/ports';
import { requireServer, requireTool } from '../harness/temporal';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SSHD = '/usr/sbin/sshd';
const onPath = (tool: string): boolean => (process.env.PATH ?? '').split(':').some((d) => existsSync(join(d, tool)));
const isRoot = process.getuid?.() === 0;

/** Processes whose environment holds `entry` (e.g. `HOME=<the test's home>`). */
function pidsWithEnv(entry: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry)) out.push(Number(pid));
    } catch {
      // exited meanwhile, or a kernel thread
    }
  }
  return out;
}

async function until<T>(probe: () => T | Promise<T>, done: (v: T) => boolean, tries = 200): Promise<T> {
  let last = await probe();
  for (let i = 0; i < tries && !done(last); i++) {
    await new Promise((r) => setTimeout(r, 100));
    last = await probe();
  }
  return last;
}

const ready =
  requireServer() &&
  requireTool('root (for unshare -m)', isRoot, 'run the e2e tests as root (CI does)') &&
  requireTool('unshare', onPath('unshare'), 'apt-get install -y util-linux') &&
  requireTool('tmux', onPath('tmux'), 'apt-get install -y tmux') &&
  requireTool('ssh', onPath('ssh'), 'apt-get install -y openssh-client');

describe.skipIf(!ready)('a new user on a machine without sshd (built-in SSH server)', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let empty: string;
  const tmux = ['-S', ''];
  /** The CLI inside a fresh mount namespace in which /usr/sbin/sshd is an empty, non-executable file. */
  const provision = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
    const hide = existsSync(SSHD) ? `mount --bind "${empty}" ${SSHD} && ` : '';
    const script = `${hide}test ! -x ${SSHD} && ! command -v sshd >/dev/null && exec "$@"`;
    try {
      const r = await run('unshare', ['-m', 'sh', '-c', script, 'sh', process.execPath, join(ROOT, 'bin', 'provision.js'), ...args], {
        env,
        cwd: ROOT,
        timeout: 240_000,
      });
      return { code: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? '' };
    }
  };
  const screen = (): string => execFileSync('tmux', [...tmux, 'capture-pane', '-p', '-t', 'e2e'], { encoding: 'utf8' });

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'gpuprov-e2e-builtin-'));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    empty = join(home, 'no-sshd');
    writeFileSync(empty, '', { mode: 0o000 });
    tmux[1] = join(home, 'tmux.sock');
    env = {
      PATH: process.env.PATH,
      HOME: home,
      TEMPORAL_CLI_PATH: inject('temporalCliPath'),
      GPUPROV_EMBEDDED_PORT: String(await freePort()),
      GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
    };
  });
  afterAll(async () => {
    await run('tmux', [...tmux, 'kill-server']).catch(() => undefined);
    await provision('server', 'stop');
    rmSync(home, { recursive: true, force: true });
  });

  it('start → ssh gpu1 hostname → ssh -t gpu1 in tmux → down → nothing left running', async () => {
    const start = await provision('start', '--name', 'gpu1');
    expect(start.code, start.err).toBe(0);
    expect(start.out).toContain('ssh gpu1');
    const cloudRoot = join(home, '.local', 'state', 'gpuprov', 'local-cloud');
    expect(countLive(cloudRoot)).toBe(1);
    const [instance] = readdirSync(join(cloudRoot, 'instances'));
    const serverPid = Number(readFileSync(join(cloudRoot, 'instances', instance!, 'pid'), 'utf8'));
    expect(readFileSync(`/proc/${serverPid}/cmdline`, 'utf8')).toContain('builtin-sshd');

    // Plain ssh with the written config: host key pinned (StrictHostKeyChecking yes), key login.
    const config = join(home, '.ssh', 'config');
    const name = execFileSync('ssh', ['-F', config, '-o', 'BatchMode=yes', 'gpu1', 'hostname'], { encoding: 'utf8' });
    expect(name.trim()).toBe(hostname());

    // An interactive session on a real terminal: tmux is the user's terminal, ssh -t asks for a pty.
    execFileSync('tmux', [...tmux, 'new-session', '-d', '-s', 'e2e', '-x', '120', '-y', '30', `ssh -F ${config} -t gpu1`]);
    expect(await until(screen, (s) => /[$#] *$/m.test(s))).toMatch(/[$#] *$/m);
    execFileSync('tmux', [...tmux, 'send-keys', '-t', 'e2e', 'echo hi-$((6*7)) shell-pid-$$', 'Enter']);
    const shown = await until(screen, (s) => /^hi-42 shell-pid-\d+$/m.test(s));
    expect(shown).toMatch(/^hi-42 shell-pid-\d+$/m);
    const shellPid = Number(/^hi-42 shell-pid-(\d+)$/m.exec(shown)![1]);
    expect(existsSync(`/proc/${shellPid}`)).toBe(true);
    // The terminal follows the window: tmux resizes, ssh sends window-change, the pty gets the size.
    execFileSync('tmux', [...tmux, 'resize-window', '-t', 'e2e', '-x', '100', '-y', '25']);
    execFileSync('tmux', [...tmux, 'send-keys', '-t', 'e2e', 'echo size-$(stty size | tr " " x)', 'Enter']);
    expect(await until(screen, (s) => /^size-25x100$/m.test(s))).toMatch(/^size-25x100$/m);

    const down = await provision('down', 'gpu1');
    expect(down.code, down.err).toBe(0);
    expect(down.out).toContain('nothing is billed');
    expect(countLive(cloudRoot)).toBe(0);
    // The instance's server and the shell it started are gone; the user's ssh saw the connection end.
    expect(
      await until(
        () => [serverPid, shellPid].filter((p) => existsSync(`/proc/${p}`)),
        (l) => l.length === 0,
      ),
    ).toEqual([]);
    expect(
      await until(
        () =>
          run('tmux', [...tmux, 'has-session', '-t', 'e2e']).then(
            () => 'open',
            () => 'ended',
          ),
        (s) => s === 'ended',
      ),
    ).toBe('ended');

    const stop = await provision('server', 'stop');
    expect(stop.code, stop.err).toBe(0);
    expect(
      await until(
        () => pidsWithEnv(`HOME=${home}`),
        (l) => l.length === 0,
      ),
    ).toEqual([]);
  });
});
