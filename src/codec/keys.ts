/**
 * The payload codec's keys, read from the environment (never from a workflow, never logged):
 *
 * | variable                 | holds                                                              |
 * |--------------------------|--------------------------------------------------------------------|
 * | `GPUPROV_CODEC_KEYS_FILE`| a file of `ID=BASE64` lines (`#` comments and blank lines skipped) |
 * | `GPUPROV_CODEC_KEYS`     | the same entries, `,`-separated                                    |
 * | neither                  | no codec: payloads are stored as the SDK encodes them (plain JSON) |
 * | both                     | refused (exit 2): one source only                                  |
 *
 * Every key is 32 bytes (AES-256), base64; an id is 1–64 of `A-Z a-z 0-9 . _ -`. The FIRST entry
 * is the current key (new payloads are encrypted with it); the others only decrypt, which is how
 * a key is rotated: put the new one first and keep the old ones until no history needs them.
 * A bad entry is an InputError naming the variable and the entry's position, never its value.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '../core/errors';

export const KEYS_VAR = 'GPUPROV_CODEC_KEYS';
export const KEYS_FILE_VAR = 'GPUPROV_CODEC_KEYS_FILE';

/** One AES-256 key and the id written beside every payload it encrypted. */
export interface CodecKey {
  readonly id: string;
  readonly key: Buffer;
}

/** The keys of a deployment: `current` encrypts, every one of `byId` decrypts. */
export interface CodecKeys {
  readonly current: CodecKey;
  readonly byId: ReadonlyMap<string, CodecKey>;
}

const KEY_ID = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/);
const BASE64 = z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/);

const FIX = 'write each key as ID=BASE64 of 32 random bytes, e.g. k1=$(openssl rand -base64 32); the first key encrypts';

/** One `ID=BASE64` entry, or an InputError naming `where` (variable and position) but not the value. */
function parseEntry(entry: string, where: string): CodecKey {
  const eq = entry.indexOf('=');
  const id = KEY_ID.safeParse(eq < 0 ? '' : entry.slice(0, eq).trim());
  if (!id.success) throw new InputError(where, 'is not ID=BASE64 with an id of 1-64 letters, digits, ".", "_" or "-"', FIX);
  const b64 = BASE64.safeParse(entry.slice(eq + 1).trim());
  const key = b64.success ? Buffer.from(b64.data, 'base64') : Buffer.alloc(0);
  // Not the id in the message: in a mistyped entry (`BASE64` alone) the "id" is the key itself.
  if (key.length !== 32) throw new InputError(where, 'the key is not 32 bytes of base64 (AES-256 needs exactly 32)', FIX);
  return { id: id.data, key };
}

/** Parses the entries of one source (already split); the first is current. */
export function parseKeys(entries: readonly string[], source: string): CodecKeys {
  const keys = entries.map((e, i) => parseEntry(e, `${source} (entry ${i + 1})`));
  const first = keys[0];
  if (!first) throw new InputError(source, 'holds no key', FIX);
  const byId = new Map<string, CodecKey>();
  for (const k of keys) {
    if (byId.has(k.id)) throw new InputError(source, `key id ${k.id} is given twice`, 'give every key its own id');
    byId.set(k.id, k);
  }
  return { current: first, byId };
}

/** The keys the environment configures, or undefined when the codec is off. See the module comment. */
export function keysFromEnv(env: NodeJS.ProcessEnv): CodecKeys | undefined {
  const file = env[KEYS_FILE_VAR];
  const inline = env[KEYS_VAR];
  if (file && inline) throw new InputError(KEYS_VAR, `is set together with ${KEYS_FILE_VAR}`, 'set only one of them');
  if (inline) return parseKeys(splitEntries(inline.split(',')), KEYS_VAR);
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InputError(KEYS_FILE_VAR, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, `give a readable file of ID=BASE64 lines`);
  }
  return parseKeys(splitEntries(text.split(/\r?\n/)), KEYS_FILE_VAR);
}

function splitEntries(parts: readonly string[]): string[] {
  return parts.map((p) => p.trim()).filter((p) => p !== '' && !p.startsWith('#'));
}
