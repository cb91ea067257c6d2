/**
 * What a local-cloud instance offers over SSH, the same with OpenSSH's sshd and the built-in
 * server: gpuprov's own SshSession (exit codes, stdin, big output, the host key it pins), and
 * OpenSSH's client (a pseudo-terminal, scp and sftp, `ssh -L`), and delete ends live sessions.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Location, Observed } from '../../src/core/provider';
import { freePort } from '../../src/ports';
import { loadOrCreateSshIdentity, withSsh, type SshIdentity, type SshTarget } from '../../src/ssh';
import { describeEachSshd, makeClientKey, makeCloud, run, sleep, waitFor, type LocalCloud } from './local/helpers';

const A: Location = { cloud: 'local', region: 'local-a' };

/** PIDs running exactly `command` (e.g. `sleep 301234`): the remote side, not the ssh client naming it. */
function pidsRunning(command: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() === command) out.push(Number(pid));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

describeEachSshd('a local instance over SSH', (mode) => {
  let cloud: LocalCloud;
  let identity: SshIdentity;
  let key: string;
  let target: SshTarget;
  let id: string;
  let ssh: (...args: string[]) => string[];

  beforeAll(async () => {
    cloud = await makeCloud(`ssh-${mode}`, mode);
    identity = await loadOrCreateSshIdentity(join(cloud.root, 'worker-key'));
    const client = await makeClientKey(cloud.root);
    key = client.key;
    const offer = (await cloud.provider.plan({ vmName: 'v', k8s: false, regions: ['local-a'] }))[0]!;
    const spec = { vmName: 'sshy', owner: 'local-ssh-test', publicKeys: [identity.publicKey, client.pub], idempotencyKey: 'sshy-1', openPorts: [22] };
    id = await cloud.provider.create(offer, {}, spec);
    const obs = await waitFor(
      () => cloud.provider.observe(A, 'sshy'),
      (o: Observed[]) => o[0]?.status === 'Running',
      30_000,
    );
    const ep = obs[0]!.endpoint!;
    target = { host: ep.host, port: ep.port, user: ep.user! };
    const common = [
      '-i',
      key,
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'LogLevel=ERROR',
    ];
    ssh = (...args) => ['-p', String(ep.port), ...common, ...args];
  });
  afterAll(async () => {
    await cloud?.close();
  });

  it('SshSession: exit codes, stdout/stderr, stdin, 4 MB of output in order, and the host key on disk', async () => {
    const pub = (await readFile(join(cloud.root, 'instances', id, 'ssh_host_ed25519_key.pub'), 'utf8')).split(' ').slice(0, 2).join(' ');
    await withSsh({ ...target, hostKey: pub }, identity, async (s) => {
      expect(s.hostKey).toBe(pub);
      expect(await s.exec('echo out; echo err >&2; exit 3')).toEqual({ code: 3, stdout: 'out\n', stderr: 'err\n' });
      expect(await s.exec('cat; echo; wc -c', { stdin: 'through stdin' })).toMatchObject({ code: 0, stdout: 'through stdin\n0\n' });
      const big = await s.exec('seq 1 500000');
      expect(big.code).toBe(0);
      const lines = big.stdout.trimEnd().split('\n');
      expect([lines.length, lines[0], lines.at(-1)]).toEqual([500_000, '1', '500000']);
    });
  });

  it.skipIf(mode !== 'openssh')("a command over SSH does not run the host user's ~/.bashrc (the shell counts as nested)", async () => {
    await withSsh(target, identity, async (s) => {
      // bash reads ~/.bashrc for commands from sshd only at SHLVL < 2; the instance's sshd sets SHLVL=1.
      const [shell, level] = (await s.exec('echo "${BASH_VERSION:+bash} $SHLVL"')).stdout.trim().split(' ');
      if (shell === 'bash') expect(level).toBe('2');
      else expect(shell).toBe('1'); // not bash: no ~/.bashrc either; SHLVL is passed through as set
    });
  });

  it('SshSession: aborting a command resolves at once with code null', async () => {
    const marker = `sleep 30${randomBytes(2).readUInt16BE(0)}`;
    await withSsh(target, identity, async (s) => {
      const stop = new AbortController();
      const r = await s.exec(`echo started; ${marker}`, { signal: stop.signal, onStdout: () => stop.abort() });
      expect(r.code).toBeNull();
    });
    // The built-in server honours the signal (OpenSSH's sshd as a non-daemon refuses it; delete ends that one below).
    if (mode === 'builtin')
      expect(
        (
          await waitFor(
            async () => pidsRunning(marker),
            (p) => p.length === 0,
          )
        ).length,
      ).toBe(0);
  });

  it('ssh -tt: a real pseudo-terminal with the client TERM, and the exit code through it', async () => {
    const r = await run('ssh', ssh('-tt', `${target.user}@${target.host}`, 'tty; test -t 0 && echo stdin-is-a-tty; echo term=$TERM'), {
      env: { ...process.env, TERM: 'xterm-256color' },
    });
    expect(r.stdout).toMatch(/^\/dev\/pts\/\d+\r?$/m);
    expect(r.stdout).toContain('stdin-is-a-tty');
    expect(r.stdout).toContain('term=xterm-256color');
    const code = await run('ssh', ssh('-tt', `${target.user}@${target.host}`, 'exit 5')).then(
      () => 0,
      (e: { code?: number }) => e.code,
    );
    expect(code).toBe(5);
  });

  it('scp both ways and an sftp batch', async () => {
    const local = join(cloud.root, 'up.bin');
    const remote = join(cloud.root, `remote-${mode}.bin`);
    const back = join(cloud.root, 'back.bin');
    const data = randomBytes(1_500_000);
    await writeFile(local, data);
    const dest = `${target.user}@${target.host}`;
    const scp = (from: string, to: string): Promise<unknown> => run('scp', ['-P', ...ssh().slice(1), from, to]);
    await scp(local, `${dest}:${remote}`);
    expect((await readFile(remote)).equals(data)).toBe(true);
    await scp(`${dest}:${remote}`, back);
    expect((await readFile(back)).equals(data)).toBe(true);
    const dir = join(cloud.root, 'sftp-dir');
    const batch = [`mkdir ${dir}`, `cd ${dir}`, `put ${local} a.bin`, 'rename a.bin b.bin', 'ls', 'rm b.bin', 'cd ..', `rmdir ${dir}`].join('\n');
    const child = spawn('sftp', ['-P', ...ssh().slice(1), '-b', '-', dest], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(`${batch}\n`);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect({ code, listed: out.includes('b.bin') }).toEqual({ code: 0, listed: true });
  });

  it('ssh -L forwards a local port to a port on the instance', async () => {
    const echo: Server = createServer((sock) => sock.pipe(sock));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const lport = await freePort();
    const fwd = spawn(
      'ssh',
      ssh('-N', '-o', 'ExitOnForwardFailure=yes', '-L', `${lport}:127.0.0.1:${(echo.address() as AddressInfo).port}`, `${target.user}@${target.host}`),
      { stdio: 'ignore' },
    );
    try {
      let reply = '';
      for (let i = 0; i < 100 && reply === ''; i++) {
        reply = await new Promise<string>((r) => {
          const c = connect(lport, '127.0.0.1', () => c.end('ping-through-L'));
          let got = '';
          c.on('data', (d: Buffer) => (got += d.toString('utf8')));
          c.on('close', () => r(got));
          c.on('error', () => r(''));
        });
        if (reply === '') await sleep(100);
      }
      expect(reply).toBe('ping-through-L');
    } finally {
      fwd.kill();
      echo.close();
    }
  });

  it('delete ends the sessions still running on the instance', async () => {
    const marker = `sleep 31${randomBytes(2).readUInt16BE(0)}`;
    const plain = spawn('ssh', ssh(`${target.user}@${target.host}`, marker), { stdio: 'ignore' });
    const tty = spawn('ssh', ssh('-tt', `${target.user}@${target.host}`, `${marker}; true`), { stdio: ['pipe', 'ignore', 'ignore'] });
    const started = await waitFor(
      async () => pidsRunning(marker),
      (p) => p.length >= 2,
      20_000,
    );
    expect(started.length).toBeGreaterThanOrEqual(2);
    await cloud.provider.delete(A, 'sshy', [id]);
    expect(await cloud.provider.observe(A, 'sshy')).toEqual([]);
    expect(
      (
        await waitFor(
          async () => pidsRunning(marker),
          (p) => p.length === 0,
        )
      ).length,
    ).toBe(0);
    plain.kill();
    tty.kill();
  });
});
