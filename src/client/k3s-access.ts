/**
 * The user's side of k3s access (`provision kubeconfig`, `provision tunnel`): the VM's status
 * from the workflow, and OpenSSH (`ssh`) with the user's own keys and the host key pinned at launch.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../core/errors';
import { statusQuery, vmWorkflowId, type VmStatus } from '../core/api';
import type { K3sStatus } from '../core/k3s-access';
import type { SshEndpoint } from '../core/provider';
import type { Io } from './command';
import { show, type FlagSpec } from './flags';
import { connectClient } from './connect';
import { CommandFailure } from './output';

/** Flags both k3s access commands take (kubeconfig adds `--out`). */
export const K3S_ACCESS_FLAGS = [
  {
    name: 'port',
    type: 'string',
    value: 'PORT',
    meaning: 'local port of `provision tunnel` (the kubeconfig points at 127.0.0.1:PORT when the cloud opens no API port)',
    format: 'a TCP port, 1 to 65535',
    default: '6443',
    example: '--port 16443',
  },
  {
    name: 'identity',
    type: 'string',
    value: 'FILE',
    meaning: 'your SSH private key for the VM',
    format: 'a private key file',
    default: 'GPUPROV_SSH_IDENTITY, else your ssh defaults and agent',
    example: '--identity ~/.ssh/id_ed25519',
  },
] as const satisfies readonly FlagSpec[];

/** The VM's status snapshot (query `status` on workflow `vm-<name>`). */
export async function vmStatus(io: Io, name: string): Promise<VmStatus> {
  const c = await connectClient(io, { autoStart: false });
  try {
    return await c.client.workflow.getHandle(vmWorkflowId(name)).query(statusQuery);
  } finally {
    await c.connection.close();
  }
}

export interface K3sAccess {
  endpoint: SshEndpoint & { user: string };
  hostKey?: string;
  k8s: K3sStatus;
}

/** The endpoint and k3s facts, or a CommandFailure saying why k3s cannot be reached. */
export function k3sAccessOf(s: VmStatus): K3sAccess {
  const k8s = s.k8s ?? { enabled: false };
  if (!k8s.enabled) throw new CommandFailure(`${s.name} runs no k3s${k8s.note ? ` (${k8s.note})` : ''}`, `npx provision status ${s.name}`);
  if (!s.endpoint) throw new CommandFailure(`${s.name} has no SSH endpoint (stage ${s.stage})`, `npx provision status ${s.name}`);
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
    '-p',
    String(port),
    '-o',
    'BatchMode=yes',
    '-o',
    `UserKnownHostsFile=${known}`,
    '-o',
    `StrictHostKeyChecking=${a.hostKey ? 'yes' : 'accept-new'}`,
    '-o',
    'ConnectTimeout=15',
    ...(identity ? ['-i', identity, '-o', 'IdentitiesOnly=yes'] : []),
    `${user}@${host}`,
  ];
  return { args, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `--port` (default `def`): a TCP port, else an InputError naming the flag. */
export function portFlag(v: string | undefined, def: number): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isInteger(n) || n < 1 || n > 65535)
    throw new InputError('--port', `${show(v)} is not a TCP port`, `give a port from 1 to 65535, e.g. --port ${def}`);
  return n;
}

/** `--identity`, else $GPUPROV_SSH_IDENTITY, else ssh's own defaults (undefined). */
export function identityFlag(v: string | undefined, io: Io): string | undefined {
  const file = v ?? (io.env.GPUPROV_SSH_IDENTITY || undefined);
  if (file !== undefined && !existsSync(file)) {
    throw new InputError(
      v === undefined ? 'GPUPROV_SSH_IDENTITY' : '--identity',
      `the key file ${file} does not exist`,
      'give your SSH private key file, e.g. --identity ~/.ssh/id_ed25519',
    );
  }
  return file;
}
