import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AesGcmCodec, CodecError, codecOption, ENCRYPTED_ENCODING, KEY_ID_FIELD, keysFromEnv, parseKeys } from '../../../src/codec';
import { InputError } from '../../../src/core/errors';

const b64 = (): string => randomBytes(32).toString('base64');
const K1 = `k1=${b64()}`;
const K2 = `k2=${b64()}`;
const text = (u?: Uint8Array | null): string => Buffer.from(u ?? new Uint8Array()).toString('utf8');
const plain = (v: unknown): Payload => defaultPayloadConverter.toPayload(v);
const SECRET = { name: 'vm-secret-name', ip: '203.0.113.77' };

describe('AesGcmCodec', () => {
  it('round trip: the encrypted payload holds no plaintext, only the encoding and key id', async () => {
    const codec = new AesGcmCodec(parseKeys([K1], 'test'));
    const [enc] = await codec.encode([plain(SECRET)]);
    expect(text(enc!.metadata!['encoding'])).toBe(ENCRYPTED_ENCODING);
    expect(text(enc!.metadata![KEY_ID_FIELD])).toBe('k1');
    expect(Object.keys(enc!.metadata!).sort()).toEqual(['encoding', KEY_ID_FIELD].sort());
    expect(text(enc!.data)).not.toContain('vm-secret-name');
    expect(Buffer.from(enc!.data!).toString('base64')).not.toContain(Buffer.from('vm-secret-name').toString('base64'));
    const [dec] = await codec.decode([enc!]);
    expect(defaultPayloadConverter.fromPayload(dec!)).toEqual(SECRET);
    expect(text(dec!.metadata!['encoding'])).toBe('json/plain');
  });

  it('every encode uses a fresh IV', async () => {
    const codec = new AesGcmCodec(parseKeys([K1], 'test'));
    const [a, b] = await codec.encode([plain('x'), plain('x')]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('rotation: the new first key encrypts, the old one still decodes', async () => {
    const old = new AesGcmCodec(parseKeys([K1], 'test'));
    const rotated = new AesGcmCodec(parseKeys([K2, K1], 'test'));
    const [byOld] = await old.encode([plain(SECRET)]);
    const [byNew] = await rotated.encode([plain(SECRET)]);
    expect(text(byNew!.metadata![KEY_ID_FIELD])).toBe('k2');
    const [a, b] = await rotated.decode([byOld!, byNew!]);
    expect(defaultPayloadConverter.fromPayload(a!)).toEqual(SECRET);
    expect(defaultPayloadConverter.fromPayload(b!)).toEqual(SECRET);
  });

  it('an unknown key id is an error naming the id, not the key', async () => {
    const [enc] = await new AesGcmCodec(parseKeys([K2], 'test')).encode([plain(SECRET)]);
    const err = await new AesGcmCodec(parseKeys([K1], 'test')).decode([enc!]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CodecError);
    expect((err as CodecError).keyId).toBe('k2');
    expect((err as Error).message).toContain('"k2"');
    expect((err as Error).message).not.toContain(K1.slice(3));
  });

  it('tampering fails: altered data, a relabelled key id, a truncated payload', async () => {
    const codec = new AesGcmCodec(parseKeys([K1, `k3=${K1.slice(3)}`], 'test'));
    const [enc] = await codec.encode([plain(SECRET)]);
    const flipped = Buffer.from(enc!.data!);
    flipped[20] = flipped[20]! ^ 1;
    await expect(codec.decode([{ ...enc!, data: flipped }])).rejects.toThrow(/failed authentication/);
    // Same key bytes under another id: the id is authenticated data, so relabelling fails.
    const relabelled = { ...enc!, metadata: { ...enc!.metadata, [KEY_ID_FIELD]: new TextEncoder().encode('k3') } };
    await expect(codec.decode([relabelled])).rejects.toThrow(/failed authentication/);
    await expect(codec.decode([{ ...enc!, data: flipped.subarray(0, 10) }])).rejects.toThrow(/too short/);
    await expect(codec.decode([{ ...enc!, metadata: { encoding: enc!.metadata!['encoding']! } }])).rejects.toThrow(KEY_ID_FIELD);
  });

  it('plain payloads pass through decode unchanged; encrypted ones are not encrypted twice', async () => {
    const codec = new AesGcmCodec(parseKeys([K1], 'test'));
    const p = plain(SECRET);
    const [dec] = await codec.decode([p]);
    expect(dec).toBe(p);
    const [enc] = await codec.encode([p]);
    const [again] = await codec.encode([enc!]);
    expect(again).toBe(enc);
  });
});

describe('keys from the environment', () => {
  it('none: the codec is off', () => {
    expect(keysFromEnv({})).toBeUndefined();
    expect(codecOption({})).toEqual({});
  });

  it('GPUPROV_CODEC_KEYS: comma-separated, first is current', () => {
    const keys = keysFromEnv({ GPUPROV_CODEC_KEYS: ` ${K2} , ${K1} ` })!;
    expect(keys.current.id).toBe('k2');
    expect([...keys.byId.keys()]).toEqual(['k2', 'k1']);
    expect(codecOption({ GPUPROV_CODEC_KEYS: K1 }).dataConverter?.payloadCodecs).toHaveLength(1);
  });

  it('GPUPROV_CODEC_KEYS_FILE: lines, comments and blanks skipped', () => {
    const f = join(mkdtempSync(join(tmpdir(), 'gpuprov-codec-')), 'keys');
    writeFileSync(f, `# rotated 2026-12\n${K2}\n\n${K1}\n`);
    expect(keysFromEnv({ GPUPROV_CODEC_KEYS_FILE: f })!.current.id).toBe('k2');
  });

  const bad: [string, NodeJS.ProcessEnv, string, RegExp][] = [
    ['both set', { GPUPROV_CODEC_KEYS: K1, GPUPROV_CODEC_KEYS_FILE: '/x' }, 'GPUPROV_CODEC_KEYS', /together/],
    ['short key', { GPUPROV_CODEC_KEYS: `k1=${randomBytes(16).toString('base64')}` }, 'GPUPROV_CODEC_KEYS (entry 1)', /32 bytes/],
    // A key alone: its base64 padding looks like `ID=` with an empty key; the message must not echo it.
    ['no id', { GPUPROV_CODEC_KEYS: `${K1},${b64()}` }, 'GPUPROV_CODEC_KEYS (entry 2)', /ID=BASE64|32 bytes/],
    ['bad id', { GPUPROV_CODEC_KEYS: `k 1=${b64()}` }, 'GPUPROV_CODEC_KEYS (entry 1)', /ID=BASE64/],
    ['duplicate id', { GPUPROV_CODEC_KEYS: `${K1},k1=${b64()}` }, 'GPUPROV_CODEC_KEYS', /twice/],
    ['empty file', { GPUPROV_CODEC_KEYS_FILE: '/dev/null' }, 'GPUPROV_CODEC_KEYS_FILE', /no key/],
    ['missing file', { GPUPROV_CODEC_KEYS_FILE: '/nonexistent/keys' }, 'GPUPROV_CODEC_KEYS_FILE', /ENOENT/],
  ];
  it.each(bad)('%s: InputError naming the variable, never the key', (_what, env, field, message) => {
    let err: unknown;
    try {
      keysFromEnv(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).field).toBe(field);
    expect((err as Error).message).toMatch(message);
    const said = `${(err as Error).message} ${(err as InputError).suggestion}`;
    for (const v of String(env.GPUPROV_CODEC_KEYS ?? '').split(',')) for (const part of v.split('=')) if (part.length >= 20) expect(said).not.toContain(part);
  });
});
