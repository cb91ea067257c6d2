/**
 * Host keys as gpuprov stores them (`<type> <base64>`: public, safe in history and known_hosts)
 * and the one check of a presented key against the key pinned at launch.
 */
import { createHash } from 'node:crypto';

/** `SHA256:<base64 without padding>` of an SSH public key blob, as OpenSSH prints it. */
export function fingerprintOfBlob(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type written inside an SSH public key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`, …). */
export function keyTypeOfBlob(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + len).toString('ascii');
}

/** `<type> <base64>` of a public key blob. */
export function hostKeyOfBlob(blob: Buffer): string {
  return `${keyTypeOfBlob(blob)} ${blob.toString('base64')}`;
}

/** The pinned-key check: `pinned` is `<type> <base64>` (a trailing comment and extra blanks are ignored). */
export function matchesPinnedKey(pinned: string, presented: Buffer): boolean {
  return pinned.trim().split(/\s+/).slice(0, 2).join(' ') === hostKeyOfBlob(presented);
}
