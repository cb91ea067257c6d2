/** SshSession against a real OpenSSH sshd on 127.0.0.1: commands, the pinned host key, and why a connect fails. */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SshError, SshSession, withSsh, type SshErrorReason } from '../../../src/ssh';
import { describeWithSshd, startTestHost, type TestHost } from './host';

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** A TCP relay to 127.0.0.1:`to` whose connections can be cut (a link that dies). */
async function tcpProxy(to: number): Promise<{ port: number; cut(): void; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(to, '127.0.0.1');
    for (const [a, b] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      sockets.add(a);
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const cut = (): void => {
    for (const x of sockets) x.destroy();
    sockets.clear();
  };
  return { port: (server.address() as AddressInfo).port, cut, close: () => (cut(), server.close()) };
}

async function reasonOf(p: Promise<unknown>): Promise<SshErrorReason> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SshError);
  return (err as SshError).reason;
}

describeWithSshd('SshSession (real sshd)', () => {
  let h: TestHost;
  beforeAll(async () => {
    h = await startTestHost('ssh-session');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('exec returns exit code, stdout and stderr; stdin reaches the command; output can be capped', async () => {
    await withSsh({ ...h.target, hostKey: h.hostKey }, h.identity, async (s) => {
      expect(await s.exec('echo out; echo err >&2; exit 3')).toEqual({ code: 3, stdout: 'out\n', stderr: 'err\n' });
      expect((await s.exec('cat', { stdin: 'through stdin' })).stdout).toBe('through stdin');
      expect((await s.exec('printf abcdefgh', { maxBytes: 3 })).stdout).toBe('abc');
      const chunks: string[] = [];
      const streamed = await s.exec('echo a; echo b', { onStdout: (d) => chunks.push(d.toString('utf8')) });
      expect({ code: streamed.code, stdout: streamed.stdout, streamed: chunks.join('') }).toEqual({ code: 0, stdout: '', streamed: 'a\nb\n' });
    });
  });

  it('reports the host key it was shown; a pinned key with a comment still matches', async () => {
    const s = await SshSession.connect({ ...h.target, hostKey: `${h.hostKey} root@somewhere` }, h.identity);
    try {
      expect(s.hostKey).toBe(h.hostKey);
      expect(s.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]+$/);
    } finally {
      s.close();
    }
  });

  it('aborting a running command (Ctrl-C in provision logs) resolves at once with code null', async () => {
    let pid = 0;
    try {
      await withSsh(h.target, h.identity, async (s) => {
        const stop = new AbortController();
        const r = await s.exec('echo $$; exec sleep 60', {
          signal: stop.signal,
          onStdout: (d) => {
            pid = Number(d.toString('utf8').trim());
            stop.abort();
          },
        });
        expect(r.code).toBeNull();
      });
    } finally {
      // The local cloud's sshd refuses session signals (no privilege separation as non-daemon), so the command outlives the channel here.
      if (pid > 0) kill(pid);
    }
  });

  it('another host key than the pinned one: host-key-mismatch', async () => {
    expect(await reasonOf(SshSession.connect({ ...h.target, hostKey: h.otherHostKey }, h.identity))).toBe('host-key-mismatch');
  });

  it('a key the host does not know: auth', async () => {
    expect(await reasonOf(SshSession.connect({ ...h.target, hostKey: h.hostKey }, h.stranger))).toBe('auth');
  });

  it('a port nothing listens on: unreachable', async () => {
    expect(await reasonOf(SshSession.connect({ ...h.target, port: h.refusedPort }, h.identity))).toBe('unreachable');
  });

  it('a session whose link goes dead: the command in flight and the next one are unreachable', async () => {
    const proxy = await tcpProxy(h.target.port);
    let pid = 0;
    try {
      const s = await SshSession.connect({ ...h.target, port: proxy.port }, h.identity);
      let started: () => void = () => undefined;
      const running = new Promise<void>((r) => (started = r));
      const inFlight = s.exec('echo $$; exec sleep 60', { onStdout: (d) => ((pid = Number(d.toString('utf8').trim())), started()) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      await running;
      proxy.cut();
      expect(await inFlight).toMatchObject({ name: 'SshError', reason: 'unreachable' });
      expect(await reasonOf(s.exec('true'))).toBe('unreachable');
      s.close();
    } finally {
      proxy.close();
      if (pid > 0) kill(pid);
    }
  });
});
