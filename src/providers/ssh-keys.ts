/** OpenSSH public keys as the HTTP adapters register them on vendor accounts. Pure. */
import { createHash } from 'node:crypto';

/** Type and base64 fields of an OpenSSH public key (the comment does not identify it). */
export function keyMaterial(pub: string): string {
  return pub.trim().split(/\s+/).slice(0, 2).join(' ');
}

/** True when both lines hold the same key, whatever their comments. */
export function sameKey(a: string, b: string): boolean {
  return keyMaterial(a) === keyMaterial(b);
}

/**
 * Vendor key name: `prefix` + a short hash of the key, so registering the same key twice is
 * harmless (the second attempt finds or clashes with the first).
 */
export function keyName(pub: string, prefix = 'gpuprov-'): string {
  return `${prefix}${createHash('sha256').update(keyMaterial(pub)).digest('hex').slice(0, 12)}`;
}
