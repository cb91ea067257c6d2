/**
 * The payload codec as the rest of gpuprov uses it: every Client and Worker built where the
 * environment configures keys (GPUPROV_CODEC_KEYS or GPUPROV_CODEC_KEYS_FILE, ./keys.ts) spreads
 * `codecOption(env)` into its options; with no keys it is `{}` and payloads stay plain.
 */
import type { DataConverter } from '@temporalio/common';
import { InputError } from '../core/errors';
import { AesGcmCodec } from './codec';
import { keysFromEnv } from './keys';

export { AesGcmCodec, CodecError, ENCRYPTED_ENCODING, KEY_ID_FIELD } from './codec';
export { KEYS_FILE_VAR, KEYS_VAR, keysFromEnv, parseKeys, type CodecKey, type CodecKeys } from './keys';

/** The codec the environment configures, or undefined (off). Bad configuration: InputError (exit 2). */
export function codecFromEnv(env: NodeJS.ProcessEnv): AesGcmCodec | undefined {
  const keys = keysFromEnv(env);
  return keys ? new AesGcmCodec(keys) : undefined;
}

/** `{ dataConverter }` for a Client, Worker or WorkflowClient's options; `{}` with the codec off. */
export function codecOption(env: NodeJS.ProcessEnv): { dataConverter?: DataConverter } {
  const codec = codecFromEnv(env);
  return codec ? { dataConverter: { payloadCodecs: [codec] } } : {};
}

export const UI_ENDPOINT_VAR = 'GPUPROV_CODEC_UI_ENDPOINT';

/**
 * The codec endpoint the embedded default's Web UI is started with (`--ui-codec-endpoint`):
 * GPUPROV_CODEC_UI_ENDPOINT, an http(s) URL (with the token as its last path segment, see
 * ./server.ts), or undefined. Read when the embedded server starts; a running one keeps its own.
 */
export function uiCodecEndpointFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const v = env[UI_ENDPOINT_VAR];
  if (!v) return undefined;
  let ok = false;
  try {
    const u = new URL(v);
    ok = (u.protocol === 'http:' || u.protocol === 'https:') && !u.search && !u.hash;
  } catch {
    ok = false;
  }
  // Not the value in the message: it holds the codec token.
  if (!ok)
    throw new InputError(
      UI_ENDPOINT_VAR,
      'is not an http(s) URL without query or fragment',
      `e.g. ${UI_ENDPOINT_VAR}=http://127.0.0.1:8089/$GPUPROV_CODEC_TOKEN`,
    );
  return v.replace(/\/+$/, '');
}
