/**
 * AES-256-GCM payload codec. What it does with each payload:
 *
 * | direction | payload                                 | result                                              |
 * |-----------|-----------------------------------------|-----------------------------------------------------|
 * | encode    | any but `binary/encrypted`              | `binary/encrypted`, key id of the current key       |
 * | encode    | already `binary/encrypted`              | unchanged (never encrypted twice)                   |
 * | decode    | not `binary/encrypted` (old histories)  | unchanged: plain histories still replay             |
 * | decode    | `binary/encrypted`, known key id        | the original payload (metadata and data)            |
 * | decode    | `binary/encrypted`, unknown/missing id  | CodecError naming the key id                        |
 * | decode    | `binary/encrypted`, altered or wrong key| CodecError (GCM authentication failed)              |
 *
 * Encrypted data is `IV (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`; the plaintext is the whole
 * original payload (its metadata too, so its encoding is not in the clear), and the key id is
 * bound as additional authenticated data, so relabelling a payload with another id fails.
 * Errors name key ids only: never a key, never plaintext.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { CodecKeys } from './keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata field holding the id of the key that encrypted a payload. */
export const KEY_ID_FIELD = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A payload the codec cannot decode; the message names the key id, never key or content. */
export class CodecError extends Error {
  constructor(
    message: string,
    readonly keyId: string | undefined,
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

function aad(keyId: string): Buffer {
  return Buffer.from(`gpuprov-codec-v1:${keyId}`, 'utf8');
}

function encodingOf(p: Payload): string | undefined {
  const e = p.metadata?.['encoding'];
  return e ? fromUtf8.decode(e) : undefined;
}

/** The original payload as bytes: metadata values and data in base64, as JSON. */
function serialize(p: Payload): Buffer {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) if (v) metadata[k] = Buffer.from(v).toString('base64');
  return Buffer.from(JSON.stringify({ metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') }), 'utf8');
}

function deserialize(bytes: Buffer): Payload {
  const o = JSON.parse(bytes.toString('utf8')) as { metadata: Record<string, string>; data: string };
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(o.metadata)) metadata[k] = new Uint8Array(Buffer.from(v, 'base64'));
  return { metadata, data: new Uint8Array(Buffer.from(o.data, 'base64')) };
}

/** The codec over `keys`; see the module comment. */
export class AesGcmCodec implements PayloadCodec {
  constructor(private readonly keys: CodecKeys) {}

  encode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((p) => (encodingOf(p) === ENCRYPTED_ENCODING ? p : this.encrypt(p)))));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((p) => (encodingOf(p) === ENCRYPTED_ENCODING ? this.decrypt(p) : p))));
  }

  private encrypt(p: Payload): Payload {
    const { id, key } = this.keys.current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(id));
    const body = Buffer.concat([cipher.update(serialize(p)), cipher.final()]);
    return {
      metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_FIELD]: utf8.encode(id) },
      data: new Uint8Array(Buffer.concat([iv, body, cipher.getAuthTag()])),
    };
  }

  private decrypt(p: Payload): Payload {
    const raw = p.metadata?.[KEY_ID_FIELD];
    const id = raw ? fromUtf8.decode(raw) : undefined;
    const known = id === undefined ? undefined : this.keys.byId.get(id);
    if (!known) {
      throw new CodecError(
        id === undefined
          ? `an encrypted payload has no ${KEY_ID_FIELD}: it was not written by this codec`
          : `a payload is encrypted with key id ${JSON.stringify(id)}, which is not among the configured keys: add that key back (after the current one)`,
        id,
      );
    }
    const data = Buffer.from(p.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new CodecError(`an encrypted payload (key id ${JSON.stringify(known.id)}) is too short: it was altered`, known.id);
    try {
      const decipher = createDecipheriv('aes-256-gcm', known.key, data.subarray(0, IV_BYTES));
      decipher.setAAD(aad(known.id));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      return deserialize(Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]));
    } catch {
      throw new CodecError(
        `an encrypted payload (key id ${JSON.stringify(known.id)}) failed authentication: it was altered, or the key under that id is not the one that encrypted it`,
        known.id,
      );
    }
  }
}
