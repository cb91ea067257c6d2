/** The launch's SSH probe: log in with the worker's key, run `true`, report the host key seen. */
import type { SshIdentity } from './identity';
import { withSsh } from './session';

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

/**
 * Connect, run a trivial command, report the host key. Rejects with an SshError when there is
 * no session, a ProbeCommandError when `true` did not exit 0. Tests pass their own.
 */
export type SshProber = (target: ProbeTarget, identity: SshIdentity, timeoutMs: number) => Promise<ProbeResult>;

/** The probe command ran and failed: the host is not usable as it is (not an SSH problem). */
export class ProbeCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeCommandError';
  }
}

/** The real prober: an SshSession with the worker's key, `true` as the command. */
export const sshProber: SshProber = (target, identity, timeoutMs) =>
  withSsh(
    target,
    identity,
    async (s) => {
      const r = await s.exec('true', { timeoutMs });
      if (r.code !== 0) throw new ProbeCommandError(`${target.user}@${target.host}:${target.port}: probe command exited ${r.code}`);
      return { fingerprint: s.fingerprint, hostKey: s.hostKey };
    },
    { readyTimeoutMs: timeoutMs },
  );
