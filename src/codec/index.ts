/**
 * The payload codec as the rest of gpuprov uses it: every Client and Worker built where the
 * environment configures keys (GPUPROV_CODEC_KEYS or GPUPROV_CODEC_KEYS_FILE, ./keys.ts) spreads
 * `codecOption(env)` into its options; with no keys it is `{}` and payloads stay plain.
 */
import type { DataConverter } from '@temporalio/common';
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
