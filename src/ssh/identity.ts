import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { utils } from 'ssh2';
import { fingerprintOfBlob } from './host-key';
import { generateEd25519 } from './keygen';

/**
 * The worker's SSH identity, used to probe and configure VMs. The private key stays in the
 * worker's memory (and in the file it came from); activities never return it, only `fingerprint`.
 */
export interface SshIdentity {
  privateKey: string;
  /** The file the private key was read from; absent when it came from an environment variable. */
  privateKeyPath?: string;
  /** `ssh-ed25519 AAAA… gpuprov-worker` */
  publicKey: string;
  /** `SHA256:…` of the public key, as `ssh-keygen -lf` prints it: public, safe in history. */
  fingerprint: string;
}

/** An identity read from (or made in) a key file. */
export type SshKeyFile = SshIdentity & { privateKeyPath: string };

const COMMENT = 'gpuprov-worker';

/** Why a private key text cannot be the worker's identity (never quotes the text). */
export class BadPrivateKey extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadPrivateKey';
  }
}

/**
 * The identity of an unencrypted OpenSSH ed25519 private key (`ssh-keygen -t ed25519 -N ''`).
 * Throws BadPrivateKey naming what is wrong: not a key, a public key, encrypted, another type.
 */
export function identityFromPrivateKey(privateKey: string): SshIdentity {
  const parsed = utils.parseKey(privateKey);
  if (parsed instanceof Error) {
    if (/encrypted/i.test(parsed.message)) throw new BadPrivateKey('the key is encrypted with a passphrase (the worker cannot ask for one)');
    throw new BadPrivateKey('not an OpenSSH private key');
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || (Array.isArray(parsed) && parsed.length !== 1)) throw new BadPrivateKey('expected exactly one key');
  if (!key.isPrivateKey()) throw new BadPrivateKey('this is a public key, not the private key');
  if (key.type !== 'ssh-ed25519') throw new BadPrivateKey(`a ${key.type} key; gpuprov needs an ed25519 key`);
  const blob = key.getPublicSSH();
  return { privateKey, publicKey: `ssh-ed25519 ${blob.toString('base64')} ${COMMENT}`, fingerprint: fingerprintOfBlob(blob) };
}

/** Load `<dir>/id_ed25519` or generate an ed25519 key pair there on first use. */
export async function loadOrCreateSshIdentity(dir: string): Promise<SshKeyFile> {
  const privateKeyPath = join(dir, 'id_ed25519');
  try {
    const [privateKey, publicKey] = await Promise.all([readFile(privateKeyPath, 'utf8'), readFile(`${privateKeyPath}.pub`, 'utf8')]);
    return { ...identityFromPrivateKey(privateKey), privateKeyPath, publicKey: publicKey.trim() };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pair = generateEd25519(COMMENT);
  const publicKey = pair.public.trim();
  // 'wx': two workers racing on first use must not overwrite each other's key.
  try {
    await writeFile(privateKeyPath, pair.private, { mode: 0o600, flag: 'wx' });
    await writeFile(`${privateKeyPath}.pub`, `${publicKey}\n`, { mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSshIdentity(dir);
    throw err;
  }
  return { ...identityFromPrivateKey(pair.private), privateKeyPath, publicKey };
}
