import { Client } from 'ssh2';
import { fingerprintOfBlob, keyTypeOfBlob, type SshIdentity } from './ssh-identity';

export interface ProbeTarget {
  host: string;
  port: number;
  user: string;
}

export interface ProbeResult {
  /** `SHA256:…` of the host key the server presented. */
  fingerprint: string;
  /** `<type> <base64>`: public, safe to keep in history and known_hosts. */
  hostKey: string;
}

/** Connect, run a trivial command, report the host key. Rejects with an Error whose `code` tells why. */
export type SshProber = (target: ProbeTarget, identity: SshIdentity, timeoutMs: number) => Promise<ProbeResult>;

export class SshProbeError extends Error {
  constructor(
    message: string,
    /** `unreachable` (retry), `auth` (key not yet installed: retry), `command` (ran but failed). */
    readonly reason: 'unreachable' | 'auth' | 'command',
  ) {
    super(message);
    this.name = 'SshProbeError';
  }
}

/** The real prober: ssh2 with the worker's key, `true` as the command. */
export const ssh2Prober: SshProber = (target, identity, timeoutMs) =>
  new Promise<ProbeResult>((resolve, reject) => {
    const conn = new Client();
    let seen: ProbeResult | undefined;
    let settled = false;
    const finish = (err?: Error, res?: ProbeResult): void => {
      if (settled) return;
      settled = true;
      conn.end();
      if (err) reject(err);
      else resolve(res!);
    };
    conn.on('ready', () => {
      conn.exec('true', (err, stream) => {
        if (err) return finish(new SshProbeError(`exec failed: ${err.message}`, 'command'));
        stream.on('close', (code: number | null) => {
          if (code === 0 && seen) finish(undefined, seen);
          else finish(new SshProbeError(`probe command exited ${code}`, 'command'));
        });
        stream.resume();
        stream.stderr.resume();
      });
    });
    conn.on('error', (err: Error & { level?: string }) => {
      const reason = err.level === 'client-authentication' ? 'auth' : 'unreachable';
      finish(new SshProbeError(`${target.user}@${target.host}:${target.port}: ${err.message}`, reason));
    });
    conn.on('close', () => finish(new SshProbeError(`${target.host}:${target.port}: connection closed`, 'unreachable')));
    conn.connect({
      host: target.host,
      port: target.port,
      username: target.user,
      privateKey: identity.privateKey,
      readyTimeout: timeoutMs,
      hostVerifier: (key: Buffer) => {
        seen = { fingerprint: fingerprintOfBlob(key), hostKey: `${keyTypeOfBlob(key)} ${key.toString('base64')}` };
        return true;
      },
    });
  });
