/**
 * ed25519 key pairs in OpenSSH formats, from Node's crypto. (ssh2's generator drops a leading
 * zero byte of the public key — about one key in 256 — which OpenSSH then refuses to load.)
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';

function str(b: Buffer | string): Buffer {
  const body = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** `ssh-ed25519` public key blob for a 32-byte key. */
export function ed25519Blob(pub: Buffer): Buffer {
  return Buffer.concat([str('ssh-ed25519'), str(pub)]);
}

/** Encode a seed and public key as an unencrypted `openssh-key-v1` private key file. */
export function opensshPrivateKey(seed: Buffer, pub: Buffer, comment: string, check = randomBytes(4).readUInt32BE(0)): string {
  let priv = Buffer.concat([u32(check), u32(check), str('ssh-ed25519'), str(pub), str(Buffer.concat([seed, pub])), str(comment)]);
  const pad: number[] = [];
  for (let i = 1; (priv.length + pad.length) % 8 !== 0; i++) pad.push(i);
  priv = Buffer.concat([priv, Buffer.from(pad)]);
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0', 'binary'), str('none'), str('none'), str(''), u32(1), str(ed25519Blob(pub)), str(priv)]);
  const b64 = body
    .toString('base64')
    .replace(/(.{70})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${b64}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

export interface KeyPair {
  /** OpenSSH private key file content (with its trailing newline). */
  private: string;
  /** `ssh-ed25519 AAAA… comment` */
  public: string;
}

/**
 * A fresh Ed25519 key as its 32-byte seed and public key. Hazard: the keys come DER-encoded from
 * the generator, not as KeyObjects exported to JWK: on Node 20 a garbage collection inside
 * `export({ format: 'jwk' })` that finalises an earlier key generation deadlocked the process
 * (the finaliser waited on a mutex already held; seen in a test that generated thousands of keys).
 */
export function ed25519Raw(): { seed: Buffer; pub: Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519', {
    privateKeyEncoding: { type: 'pkcs8', format: 'der' },
    publicKeyEncoding: { type: 'spki', format: 'der' },
  });
  // RFC 8410: the PKCS#8 (48 bytes) and SPKI (44 bytes) encodings end with the seed and the key.
  if (privateKey.length !== 48 || publicKey.length !== 44) throw new Error('unexpected Ed25519 DER encoding');
  return { seed: privateKey.subarray(-32), pub: publicKey.subarray(-32) };
}

export function generateEd25519(comment: string): KeyPair {
  const { seed, pub } = ed25519Raw();
  return { private: opensshPrivateKey(seed, pub, comment), public: `ssh-ed25519 ${ed25519Blob(pub).toString('base64')} ${comment}` };
}
