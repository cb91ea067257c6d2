/**
 * The user's side of k3s access (`provision kubeconfig`, `provision tunnel`): the VM's status
 * from the workflow, and OpenSSH (`ssh`) with the user's own keys and the host key pinned at launch.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectClient } from './connect';
import type { Io } from './command';
import type { SshEndpoint } from '../core/provider';
import { statusQuery, vmWorkflowId, type VmStatus } from '../core/api';
import type { K3sStatus } from '../core/k3s-access';

export class K3sAccessError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'K3sAccessError';
  }
}

/** The VM's status snapshot (query `status` on workflow `vm-<name>`). */
export async function vmStatus(io: Io, name: string): Promise<VmStatus> {
  const c = await connectClient(io, { autoStart: false });
  try {
    return await c.client.workflow.getHandle(vmWorkflowId(name)).query(statusQuery);
  } catch (err) {
    throw new K3sAccessError(`no VM named ${name} answers (${(err as Error).message.split('\n')[0] ?? ''})`, 1);
  } finally {
    await c.connection.close();
  }
}

export interface K3sAccess {
  endpoint: SshEndpoint & { user: string };
  hostKey?: string;
  k8s: K3sStatus;
}

/** The endpoint and k3s facts, or a K3sAccessError saying why k3s cannot be reached. */
export function k3sAccessOf(s: VmStatus): K3sAccess {
  const k8s = (s.k8s ?? { enabled: false });
  if (!k8s.enabled) throw new K3sAccessError(`${s.name} runs no k3s${k8s.note ? ` (${k8s.note})` : ''}`, 1);
  if (!s.endpoint) throw new K3sAccessError(`${s.name} has no SSH endpoint (stage ${s.stage})`, 1);
  return { endpoint: { ...s.endpoint, user: s.endpoint.user ?? 'root' }, ...(s.hostKey ? { hostKey: s.hostKey } : {}), k8s };
}

/** `ssh` arguments with the pinned host key (a temporary known_hosts file) and optional identity. */
export function sshArgs(a: K3sAccess, identity: string | undefined): { args: string[]; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'gpuprov-ssh-'));
  const known = join(dir, 'known_hosts');
  const { host, port, user } = a.endpoint;
  const hostId = port === 22 ? host : `[${host}]:${port}`;
  if (a.hostKey) writeFileSync(known, `${hostId} ${a.hostKey.trim().split(/\s+/).slice(0, 2).join(' ')}\n`, { mode: 0o600 });
  const args = [
    '-p', String(port),
    '-o', 'BatchMode=yes',
    '-o', `UserKnownHostsFile=${known}`,
    '-o', `StrictHostKeyChecking=${a.hostKey ? 'yes' : 'accept-new'}`,
    '-o', 'ConnectTimeout=15',
    ...(identity ? ['-i', identity, '-o', 'IdentitiesOnly=yes'] : []),
    `${user}@${host}`,
  ];
  return { args, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `--flag value` / `--flag=value` options and positionals. */
export function parseArgs(args: string[], valued: string[]): { positional: string[]; opts: Map<string, string | true> } {
  const positional: string[] = [];
  const opts = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const key = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (eq > 0) opts.set(key, a.slice(eq + 1));
    else if (valued.includes(key)) {
      const v = args[++i];
      if (v === undefined) throw new K3sAccessError(`--${key} needs a value`, 2);
      opts.set(key, v);
    } else opts.set(key, true);
  }
  return { positional, opts };
}

/** A TCP port option (default `def`). */
export function portOption(v: string | true | undefined, def: number): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new K3sAccessError(`--port must be a TCP port, got ${String(v)}`, 2);
  return n;
}
