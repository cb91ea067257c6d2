import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateEd25519 } from './keygen';

/**
 * The worker's own SSH identity, used to probe and configure VMs. The private key stays in
 * the worker's memory and on its disk (0600); activities never return it.
 */
export interface SshIdentity {
  privateKey: string;
  privateKeyPath: string;
  /** `ssh-ed25519 AAAA… gpuprov-worker` */
  publicKey: string;
}

/** Load `<dir>/id_ed25519` or generate an ed25519 key pair there on first use. */
export async function loadOrCreateSshIdentity(dir: string): Promise<SshIdentity> {
  const privateKeyPath = join(dir, 'id_ed25519');
  try {
    const [privateKey, publicKey] = await Promise.all([readFile(privateKeyPath, 'utf8'), readFile(`${privateKeyPath}.pub`, 'utf8')]);
    return { privateKey, privateKeyPath, publicKey: publicKey.trim() };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pair = generateEd25519('gpuprov-worker');
  const publicKey = pair.public.trim();
  // 'wx': two workers racing on first use must not overwrite each other's key.
  try {
    await writeFile(privateKeyPath, pair.private, { mode: 0o600, flag: 'wx' });
    await writeFile(`${privateKeyPath}.pub`, `${publicKey}\n`, { mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSshIdentity(dir);
    throw err;
  }
  return { privateKey: pair.private, privateKeyPath, publicKey };
}
