/**
 * One SSH connection (ssh2, the worker's key, the VM's pinned host key) for the k3s
 * activities: run commands with stdin, and open TCP streams to the VM's loopback (the tunnel path).
 */
import type { Duplex } from 'node:stream';
import { Client } from 'ssh2';
import type { SshIdentity } from '../activities/ssh-identity';
import { keyTypeOfBlob } from '../activities/ssh-identity';

export interface SshTarget {
  host: string;
  port: number;
  user: string;
  /** `<type> <base64>` of the host key pinned at launch; any other key is refused. */
  hostKey?: string;
}

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SshSession {
  exec(command: string, stdin?: string, timeoutMs?: number): Promise<ExecResult>;
  /** A TCP stream to `host:port` as seen from the VM (`direct-tcpip`). */
  forward(host: string, port: number): Promise<Duplex>;
}

/** Could not connect or log in (retryable), or the host key is not the pinned one (not retryable). */
export class SshConnectError extends Error {
  constructor(
    message: string,
    readonly hostKeyMismatch = false,
  ) {
    super(message);
    this.name = 'SshConnectError';
  }
}

/** Connect, run `fn`, disconnect. */
export async function withSsh<T>(target: SshTarget, identity: SshIdentity, fn: (s: SshSession) => Promise<T>, readyTimeoutMs = 15_000): Promise<T> {
  const conn = new Client();
  let mismatch = false;
  await new Promise<void>((resolve, reject) => {
    conn.once('ready', () => resolve());
    conn.once('error', (err: Error) =>
      reject(new SshConnectError(mismatch ? `${target.host}:${target.port}: host key is not the one pinned at launch` : `${target.user}@${target.host}:${target.port}: ${err.message}`, mismatch)),
    );
    conn.connect({
      host: target.host,
      port: target.port,
      username: target.user,
      privateKey: identity.privateKey,
      readyTimeout: readyTimeoutMs,
      hostVerifier: (key: Buffer) => {
        if (!target.hostKey) return true;
        const ok = `${keyTypeOfBlob(key)} ${key.toString('base64')}` === target.hostKey.trim().split(/\s+/).slice(0, 2).join(' ');
        if (!ok) mismatch = true;
        return ok;
      },
    });
  });
  const session: SshSession = {
    exec: (command, stdin, timeoutMs = 15 * 60_000) =>
      new Promise<ExecResult>((resolve, reject) => {
        conn.exec(command, (err, stream) => {
          if (err) return reject(err);
          const out: Buffer[] = [];
          const errs: Buffer[] = [];
          const timer = setTimeout(() => {
            stream.close();
            reject(new Error(`remote command timed out after ${timeoutMs} ms`));
          }, timeoutMs);
          stream.on('data', (d: Buffer) => out.push(d));
          stream.stderr.on('data', (d: Buffer) => errs.push(d));
          stream.on('close', (code: number | null) => {
            clearTimeout(timer);
            resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(errs).toString('utf8') });
          });
          if (stdin !== undefined) stream.end(stdin);
        });
      }),
    forward: (host, port) =>
      new Promise<Duplex>((resolve, reject) => {
        conn.forwardOut('127.0.0.1', 0, host, port, (err, stream) => (err ? reject(err) : resolve(stream)));
      }),
  };
  try {
    return await fn(session);
  } finally {
    conn.end();
  }
}
