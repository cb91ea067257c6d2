/**
 * `provision ssh-proxy NAME`: the ProxyCommand of a VM's ssh entry (src/client/user-files.ts).
 * At every connect it asks the VM's workflow for its current endpoint and host key (so `ssh NAME`
 * follows a `--recover` relaunch or a replaced instance), re-pins that key under the VM's alias,
 * and carries the bytes between ssh and the VM. It never accepts a key itself: ssh checks the
 * server's key against the pin (StrictHostKeyChecking yes), and the pin is only ever the key the
 * worker recorded for the instance it launched. Loaded without the rest of the CLI: it runs once
 * per `ssh`.
 */
import { connect as tcpConnect } from 'node:net';
import { statusQuery, vmWorkflowId, type VmStatus } from '../core/api';
import { connectClient } from './connect';
import { pinHostKey } from './user-files';

const REACHABLE = new Set(['ready', 'k8s-failed']);

type Reachable = Pick<VmStatus, 'name' | 'stage' | 'endpoint' | 'hostKey' | 'retiring'>;

/**
 * Where `ssh NAME` goes: the VM's endpoint once it is up; while a `--recover` replacement
 * launches, the preempted instance it replaces (until that one is deleted, at the replacement's Ready).
 */
export function connectTarget(s: Reachable): { endpoint: NonNullable<VmStatus['endpoint']>; hostKey: string } | undefined {
  if (REACHABLE.has(s.stage) && s.endpoint && s.hostKey) return { endpoint: s.endpoint, hostKey: s.hostKey };
  const r = s.retiring;
  if (!REACHABLE.has(s.stage) && r && !r.goneAt && r.endpoint && r.hostKey) return { endpoint: r.endpoint, hostKey: r.hostKey };
  return undefined;
}

/** Why `s` offers nothing to connect to, or undefined when it does. */
export function notConnectable(s: Reachable): string | undefined {
  if (connectTarget(s)) return undefined;
  if (!REACHABLE.has(s.stage)) return `${s.name} is ${s.stage}: nothing to connect to (npx provision status ${s.name})`;
  return `${s.name} has no endpoint or host key yet (npx provision status ${s.name})`;
}

/** Runs the proxy for `name`; resolves to the exit code (ssh shows stderr). */
export async function sshProxy(name: string, env: NodeJS.ProcessEnv): Promise<number> {
  const err = (s: string): void => void process.stderr.write(`gpuprov ssh-proxy: ${s}\n`);
  let s: VmStatus;
  const conn = await connectClient({ out: () => undefined, err: (l) => err(l.trimEnd()), isTTY: false, env }, { autoStart: false });
  try {
    s = await conn.client.workflow.getHandle(vmWorkflowId(name)).query(statusQuery);
  } finally {
    await conn.connection.close();
  }
  const target = connectTarget(s);
  if (!target) {
    err(notConnectable(s) ?? `${name}: nothing to connect to`);
    return 1;
  }
  await pinHostKey(env, name, target.hostKey);
  const { host, port } = target.endpoint;
  return new Promise<number>((resolve) => {
    const sock = tcpConnect({ host, port });
    sock.on('error', (e) => {
      err(`${name} at ${host}:${port}: ${e.message}`);
      resolve(1);
    });
    sock.on('close', () => resolve(0));
    process.stdin.pipe(sock);
    sock.pipe(process.stdout);
    process.stdin.on('end', () => sock.end());
  });
}

/** Entry for bin/provision.js's fast path: `provision ssh-proxy NAME`. */
export async function main(argv: string[] = process.argv.slice(3)): Promise<void> {
  const name = argv[0];
  if (!name || argv.length !== 1) {
    process.stderr.write('usage: provision ssh-proxy NAME (the ProxyCommand of the ssh entry gpuprov writes)\n');
    process.exit(2);
  }
  try {
    process.exit(await sshProxy(name, process.env));
  } catch (e) {
    process.stderr.write(`gpuprov ssh-proxy: ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
