/**
 * Files on the user's machine: the user's SSH key, one ssh config entry per VM (Included once
 * from ~/.ssh/config, which is backed up first), and a known_hosts entry pinning the host key the
 * worker saw, so plain `ssh <name>` works with host-key checking on. Key files are 0600.
 */
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { InputError } from '../core/errors';
import { generateEd25519 } from '../ssh/keygen';
import type { SshEndpoint } from '../core/provider';
import { configDir } from '../paths';

export interface UserKey {
  privateKeyPath: string;
  publicKey: string;
}

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME ?? homedir();
}

export function sshPaths(env: NodeJS.ProcessEnv) {
  const base = join(configDir(env), 'ssh');
  return {
    base,
    entries: join(base, 'config.d'),
    knownHosts: join(base, 'known_hosts'),
    userConfig: join(home(env), '.ssh', 'config'),
    entry: (name: string) => join(base, 'config.d', `${name}.conf`),
  };
}

/** The user's key: `--ssh-key`, else ~/.ssh/id_ed25519|id_ecdsa|id_rsa, else a gpuprov key made once. */
export async function userKey(env: NodeJS.ProcessEnv, explicit?: string): Promise<UserKey> {
  const candidates = explicit ? [explicit] : ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((k) => join(home(env), '.ssh', k));
  for (const p of candidates) {
    if (existsSync(p) && existsSync(`${p}.pub`)) return { privateKeyPath: p, publicKey: (await readFile(`${p}.pub`, 'utf8')).trim() };
  }
  if (explicit)
    throw new InputError(
      '--ssh-key',
      `need both ${explicit} and ${explicit}.pub`,
      'give the private key file whose public key is beside it as .pub, e.g. --ssh-key ~/.ssh/id_ed25519',
    );
  const own = join(configDir(env), 'keys', 'id_ed25519');
  if (!existsSync(own)) {
    await mkdir(dirname(own), { recursive: true, mode: 0o700 });
    const pair = generateEd25519('gpuprov-user');
    await writeFile(own, pair.private, { mode: 0o600 });
    await writeFile(`${own}.pub`, `${pair.public.trim()}\n`, { mode: 0o644 });
  }
  return { privateKeyPath: own, publicKey: (await readFile(`${own}.pub`, 'utf8')).trim() };
}

/** Alias under which the host key is pinned: survives IP/port reuse between VMs. */
export const hostKeyAlias = (name: string): string => `gpuprov-${name}`;

/**
 * The variables `ssh NAME` needs to reach the same Temporal server and state as the CLI that
 * wrote the entry (none of them a secret: TLS keys and API keys stay in the user's environment).
 */
const PROXY_ENV = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_PROFILE',
  'TEMPORAL_CONFIG_FILE',
  'GPUPROV_STATE_DIR',
  'GPUPROV_CONFIG_DIR',
  'GPUPROV_EMBEDDED_PORT',
  'GPUPROV_TASK_QUEUE',
] as const;

const shellQuoted = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The package's CLI script (bin/provision.js), from src/client or dist/src/client. */
function cliScript(): string {
  for (const up of ['../..', '../../..']) {
    const p = join(__dirname, up, 'bin', 'provision.js');
    if (existsSync(p)) return p;
  }
  return join(__dirname, '..', '..', 'bin', 'provision.js');
}

/**
 * The entry's ProxyCommand: `provision ssh-proxy NAME` reads the VM's current endpoint and host key
 * from its workflow at every connect (so `ssh NAME` follows a relaunch), re-pins the key the worker
 * saw, and carries the bytes; ssh still checks the server's key against that pin, strictly.
 */
export function proxyCommand(name: string, env: NodeJS.ProcessEnv): string {
  const vars = PROXY_ENV.flatMap((v) => (env[v] ? [`${v}=${shellQuoted(env[v])}`] : []));
  return [...(vars.length ? ['env', ...vars] : []), shellQuoted(process.execPath), shellQuoted(cliScript()), 'ssh-proxy', shellQuoted(name)].join(' ');
}

export function renderEntry(name: string, ep: SshEndpoint, user: string, keyPath: string, knownHosts: string, proxy?: string): string {
  return [
    `# written by gpuprov for VM ${name}; removed by 'provision down ${name}'`,
    `Host ${name}`,
    ...(proxy ? [`  # the endpoint when written; each connect asks the VM's workflow for the current one`, `  ProxyCommand ${proxy}`] : []),
    `  HostName ${ep.host}`,
    `  Port ${ep.port}`,
    `  User ${user}`,
    `  IdentityFile ${keyPath}`,
    '  IdentitiesOnly yes',
    `  HostKeyAlias ${hostKeyAlias(name)}`,
    `  UserKnownHostsFile ${knownHosts}`,
    '  StrictHostKeyChecking yes',
    '',
  ].join('\n');
}

/** Add `Include <entries>/*.conf` at the top of ~/.ssh/config, once, after backing it up. */
async function ensureInclude(env: NodeJS.ProcessEnv): Promise<void> {
  const p = sshPaths(env);
  const line = `Include ${p.entries}/*.conf`;
  await mkdir(dirname(p.userConfig), { recursive: true, mode: 0o700 });
  const current = existsSync(p.userConfig) ? await readFile(p.userConfig, 'utf8') : '';
  if (current.split('\n').some((l) => l.trim() === line)) return;
  if (current && !existsSync(`${p.userConfig}.gpuprov-backup`)) await copyFile(p.userConfig, `${p.userConfig}.gpuprov-backup`);
  // Include must come before any Host block to apply to every host name.
  await writeFile(p.userConfig, `# gpuprov VMs (added by gpuprov)\n${line}\n\n${current}`, { mode: 0o600 });
}

/**
 * Pin `hostKey` (the key the worker saw on the VM's current instance) under the VM's alias,
 * replacing an older pin of that name; a pin that is already this key is left as it is.
 */
export async function pinHostKey(env: NodeJS.ProcessEnv, name: string, hostKey: string): Promise<void> {
  const p = sshPaths(env);
  const line = `${hostKeyAlias(name)} ${hostKey}`;
  const lines = existsSync(p.knownHosts) ? (await readFile(p.knownHosts, 'utf8')).split('\n').filter((l) => l) : [];
  if (lines.includes(line) && lines.filter((l) => l.startsWith(`${hostKeyAlias(name)} `)).length === 1) return;
  const known = [...lines.filter((l) => !l.startsWith(`${hostKeyAlias(name)} `)), line];
  await mkdir(p.base, { recursive: true, mode: 0o700 });
  await writeFile(p.knownHosts, `${known.join('\n')}\n`, { mode: 0o600 });
  await chmod(p.knownHosts, 0o600);
}

/** Write the VM's ssh entry (its ProxyCommand follows relaunches) and pin its host key. */
export async function writeSshEntry(env: NodeJS.ProcessEnv, name: string, ep: SshEndpoint, user: string, key: UserKey, hostKey: string): Promise<string> {
  const p = sshPaths(env);
  await mkdir(p.entries, { recursive: true, mode: 0o700 });
  await writeFile(p.entry(name), renderEntry(name, ep, user, key.privateKeyPath, p.knownHosts, proxyCommand(name, env)), { mode: 0o600 });
  await pinHostKey(env, name, hostKey);
  await ensureInclude(env);
  return p.entry(name);
}

/** Remove the VM's ssh entry and pinned key (the Include line stays; it matches nothing). */
export async function removeSshEntry(env: NodeJS.ProcessEnv, name: string): Promise<void> {
  const p = sshPaths(env);
  await rm(p.entry(name), { force: true });
  if (existsSync(p.knownHosts)) {
    const kept = (await readFile(p.knownHosts, 'utf8')).split('\n').filter((l) => l && !l.startsWith(`${hostKeyAlias(name)} `));
    await writeFile(p.knownHosts, kept.length ? `${kept.join('\n')}\n` : '', { mode: 0o600 });
  }
}
