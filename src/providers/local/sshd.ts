/**
 * Which SSH server a local instance runs, and starting it: OpenSSH's sshd where it is installed,
 * else gpuprov's built-in server (src/ssh/server.ts) with the same arguments, config file and
 * pid tracking. Used only by `api.ts`.
 */
import { spawn, execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, open, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { ProviderError } from '../../core/errors';
import { generateEd25519 } from '../../ssh/keygen';
import { builtinSshdCommand } from '../../ssh/server';
import { missingBinary } from './errors';
import { DEFAULT_SSHD, findSshd } from './procs';

const run = promisify(execFile);

/** Privilege-separation directory sshd insists on (Debian creates it only from its unit file). */
const PRIVSEP_DIR = '/run/sshd';

/** Which SSH server instances run: `GPUPROV_LOCAL_SSHD`, or `auto` (OpenSSH when installed). */
export type SshdMode = 'openssh' | 'builtin' | 'auto';
export type Sshd = { kind: 'openssh'; path: string } | { kind: 'builtin' };

/**
 * Decide the instances' SSH server. OpenSSH needs sshd and ssh-keygen (else InvalidRequest with
 * the install command); the built-in server needs nothing but Node. `sshdPath` pins OpenSSH's
 * binary unless `mode` is builtin.
 */
export async function chooseSshd(mode: string, sshdPath?: string): Promise<Sshd> {
  if (mode !== 'openssh' && mode !== 'builtin' && mode !== 'auto') {
    throw new ProviderError('InvalidRequest', `local: GPUPROV_LOCAL_SSHD must be openssh, builtin or unset (auto), not ${JSON.stringify(mode)}`);
  }
  const path = mode === 'builtin' ? undefined : (sshdPath ?? findSshd());
  if (path === undefined && mode !== 'openssh') return { kind: 'builtin' };
  const sshd = path ?? DEFAULT_SSHD;
  try {
    await access(sshd, constants.X_OK);
  } catch {
    throw missingBinary(sshd);
  }
  // `ssh-keygen -?` exits non-zero; only a failed exec means it is missing.
  const found = await run('ssh-keygen', ['-?']).then(
    () => true,
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
  );
  if (!found) throw missingBinary('ssh-keygen');
  return { kind: 'openssh', path: sshd };
}

/** Write the instance's ed25519 host key pair at `hostKey` (+ `.pub`). */
export async function makeHostKey(sshd: Sshd, hostKey: string, comment: string): Promise<void> {
  if (sshd.kind === 'openssh') {
    await mkdir(PRIVSEP_DIR, { recursive: true, mode: 0o755 });
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', hostKey]);
    return;
  }
  const pair = generateEd25519(comment);
  await writeFile(hostKey, pair.private, { mode: 0o600 });
  await writeFile(`${hostKey}.pub`, `${pair.public}\n`);
}

/** Start the server detached (it outlives this process) with `-D -f config -E log`; returns its pid. */
export async function startSshd(sshd: Sshd, config: string, log: string): Promise<number> {
  const args = ['-D', '-f', config, '-E', log];
  const cmd = sshd.kind === 'openssh' ? { command: sshd.path, args } : builtinSshdCommand(args);
  // The built-in server's own start-up errors go to its log too (observe shows the last line).
  const fh = sshd.kind === 'builtin' ? await open(log, 'a') : undefined;
  const child = spawn(cmd.command, cmd.args, { detached: true, stdio: fh ? ['ignore', fh.fd, fh.fd] : 'ignore', cwd: '/' });
  await fh?.close();
  child.on('error', () => undefined); // a failed exec shows up as a missing pid / exited sshd in observe
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${cmd.command}`);
  return child.pid;
}
