/**
 * The codec server's bearer token: `--token-file FILE`, else GPUPROV_CODEC_TOKEN_FILE, else
 * GPUPROV_CODEC_TOKEN. Required (a codec server without one would decrypt for anyone who can
 * reach it); at least 16 characters of `A-Z a-z 0-9 . _ ~ -` (it may stand in a URL path for the
 * Web UI). Errors name the source, never the value.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '../core/errors';

export const TOKEN_VAR = 'GPUPROV_CODEC_TOKEN';
export const TOKEN_FILE_VAR = 'GPUPROV_CODEC_TOKEN_FILE';

const TOKEN = z.string().regex(/^[A-Za-z0-9._~-]{16,512}$/);
const FIX = `e.g. export ${TOKEN_VAR}=$(openssl rand -hex 24)`;

/** The token, or an InputError naming the flag/variable it came from (or that none was given). */
export function codecToken(env: NodeJS.ProcessEnv, tokenFile?: string): string {
  const file = tokenFile ?? (env[TOKEN_FILE_VAR] || undefined);
  const source = tokenFile !== undefined ? '--token-file' : file !== undefined ? TOKEN_FILE_VAR : TOKEN_VAR;
  let raw: string | undefined = env[TOKEN_VAR];
  if (file !== undefined) {
    try {
      raw = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new InputError(source, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, 'give a readable file holding the token');
    }
  }
  if (!raw) throw new InputError(source, 'no codec token is set: the codec server serves only requests that carry one', FIX);
  const ok = TOKEN.safeParse(raw);
  if (!ok.success) throw new InputError(source, 'the token is not 16-512 characters of A-Z a-z 0-9 . _ ~ -', FIX);
  return ok.data;
}
