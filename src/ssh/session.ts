/**
 * The one SSH session (ssh2, a private key, optionally the host key pinned at launch): run
 * commands, open TCP streams from the VM's side, close. Used by the launch probe, the k3s and
 * fleet bootstrap activities and `provision logs`. Failing to get a session is an SshError.
 */
import type { Duplex } from 'node:stream';
import { Client, type ClientChannel } from 'ssh2';
import { SshError } from './errors';
import { fingerprintOfBlob, hostKeyOfBlob, matchesPinnedKey } from './host-key';
import type { SshIdentity } from './identity';

export interface SshTarget {
  host: string;
  port: number;
  user: string;
  /** `<type> <base64>` pinned at launch: any other key is refused (`host-key-mismatch`). */
  hostKey?: string;
}

export interface ConnectOptions {
  /** Handshake and login must finish within this (default 15 s). */
  readyTimeoutMs?: number;
}

export interface ExecOptions {
  /** Written to the command's stdin, which is then closed (left open when absent). */
  stdin?: string;
  /** Close the channel and reject after this long (no limit when absent). */
  timeoutMs?: number;
  /** Keep at most this many bytes of each of stdout and stderr (the rest is read and dropped). */
  maxBytes?: number;
  /** Stream stdout here instead of collecting it. */
  onStdout?: (chunk: Buffer) => void;
  /** Stream stderr here instead of collecting it. */
  onStderr?: (chunk: Buffer) => void;
  /** Ends the command (SIGTERM, then the channel is closed); exec then resolves at once with code null. */
  signal?: AbortSignal;
}

export interface ExecResult {
  /** Exit status; null when the command was ended by a signal or its channel closed without one. */
  code: number | null;
  stdout: string;
  stderr: string;
}

// Turns a silently dead link into `unreachable` within about a minute instead of a hung command.
const KEEPALIVE = { keepaliveInterval: 15_000, keepaliveCountMax: 4 };

export class SshSession {
  /** Why the connection ended, when it ended by itself (not by close()). */
  #lost: SshError | undefined;
  #closing = false;

  private constructor(
    private readonly conn: Client,
    private readonly where: string,
    /** `<type> <base64>` of the host key the server presented. */
    readonly hostKey: string,
    /** `SHA256:…` of that key. */
    readonly fingerprint: string,
  ) {
    conn.on('error', (err: Error) => {
      this.#lost ??= new SshError('unreachable', `${where}: ${err.message}`);
    });
    conn.on('close', () => {
      if (!this.#closing) this.#lost ??= new SshError('unreachable', `${where}: connection lost`);
    });
  }

  /** Connect and log in. Rejects with an SshError whose reason says why not. */
  static connect(target: SshTarget, identity: Pick<SshIdentity, 'privateKey'>, o: ConnectOptions = {}): Promise<SshSession> {
    const where = `${target.user}@${target.host}:${target.port}`;
    const conn = new Client();
    let presented: Buffer | undefined;
    let mismatch = false;
    return new Promise<SshSession>((resolve, reject) => {
      const fail = (err: SshError): void => {
        conn.removeListener('ready', onReady).removeListener('error', onError).removeListener('close', onClose);
        conn.on('error', () => undefined); // late socket errors after end() must not go unhandled
        conn.end();
        reject(err);
      };
      const onReady = (): void => {
        conn.removeListener('error', onError).removeListener('close', onClose);
        resolve(new SshSession(conn, where, hostKeyOfBlob(presented!), fingerprintOfBlob(presented!)));
      };
      const onError = (err: Error & { level?: string }): void => {
        if (mismatch) fail(new SshError('host-key-mismatch', `${where}: host key ${fingerprintOfBlob(presented!)} is not the one pinned at launch`));
        else if (err.level === 'client-authentication') fail(new SshError('auth', `${where}: ${err.message}`));
        else fail(new SshError('unreachable', `${where}: ${err.message}`));
      };
      const onClose = (): void => fail(new SshError('unreachable', `${where}: connection closed before login`));
      conn.once('ready', onReady).once('error', onError).once('close', onClose);
      conn.connect({
        host: target.host,
        port: target.port,
        username: target.user,
        privateKey: identity.privateKey,
        readyTimeout: o.readyTimeoutMs ?? 15_000,
        ...KEEPALIVE,
        hostVerifier: (key: Buffer) => {
          presented = key;
          mismatch = target.hostKey !== undefined && !matchesPinnedKey(target.hostKey, key);
          return !mismatch;
        },
      });
    });
  }

  /** Run `command`; resolves with its exit code and output, whatever the code. */
  exec(command: string, o: ExecOptions = {}): Promise<ExecResult> {
    if (this.#lost) return Promise.reject(this.#lost);
    return new Promise<ExecResult>((resolve, reject) => {
      this.conn.exec(command, (err, stream: ClientChannel) => {
        if (err) return reject(this.#lost ?? new SshError('unreachable', `${this.where}: cannot start a command: ${err.message}`));
        const out = collector(o.maxBytes);
        const errs = collector(o.maxBytes);
        let settled = false;
        const settle = (e: Error | undefined, code: number | null = null): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          o.signal?.removeEventListener('abort', abort);
          if (e) reject(e);
          else resolve({ code, stdout: out.text(), stderr: errs.text() });
        };
        // Closing the channel alone does not end a command that writes nothing (sshd waits for it).
        const end = (): void => {
          stream.signal('TERM');
          stream.close();
        };
        const abort = (): void => {
          end();
          settle(undefined);
        };
        const timer =
          o.timeoutMs === undefined
            ? undefined
            : setTimeout(() => {
                end();
                settle(new Error(`remote command timed out after ${o.timeoutMs} ms`));
              }, o.timeoutMs);
        if (o.signal?.aborted) abort();
        else o.signal?.addEventListener('abort', abort, { once: true });
        const onStdout = o.onStdout ?? out.add;
        const onStderr = o.onStderr ?? errs.add;
        stream.on('data', (d: Buffer) => settled || onStdout(d));
        stream.stderr.on('data', (d: Buffer) => settled || onStderr(d));
        stream.on('close', (code?: number | null, signal?: string) => {
          if (code == null && signal == null && this.#lost) settle(this.#lost);
          else settle(undefined, code ?? null);
        });
        if (o.stdin !== undefined) stream.end(o.stdin);
      });
    });
  }

  /** A TCP stream to `host:port` as seen from the VM (`direct-tcpip`); rejects when the VM cannot open it. */
  forward(host: string, port: number): Promise<Duplex> {
    if (this.#lost) return Promise.reject(this.#lost);
    return new Promise<Duplex>((resolve, reject) => {
      this.conn.forwardOut('127.0.0.1', 0, host, port, (err, stream) => (err ? reject(err) : resolve(stream)));
    });
  }

  close(): void {
    this.#closing = true;
    this.conn.end();
  }
}

/** Connect, run `fn` with the session, always close. */
export async function withSsh<T>(
  target: SshTarget,
  identity: Pick<SshIdentity, 'privateKey'>,
  fn: (s: SshSession) => Promise<T>,
  o: ConnectOptions = {},
): Promise<T> {
  const session = await SshSession.connect(target, identity, o);
  try {
    return await fn(session);
  } finally {
    session.close();
  }
}

function collector(maxBytes: number | undefined): { add: (d: Buffer) => void; text: () => string } {
  const parts: Buffer[] = [];
  let kept = 0;
  return {
    add: (d) => {
      if (maxBytes !== undefined && kept >= maxBytes) return;
      const part = maxBytes === undefined ? d : d.subarray(0, maxBytes - kept);
      parts.push(part);
      kept += part.length;
    },
    text: () => Buffer.concat(parts).toString('utf8'),
  };
}
