/**
 * Bad codec configuration is bad input: exit 2 naming the variable (or flag) and the fix, nothing
 * contacted, no key or token printed. A counting listener stands in for the Temporal server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/client/cli';
import { recordingIo, type RecordingIo } from '../../harness/recording-io';
import { startCountingListener, type CountingListener } from '../../harness/counting-listener';

let listener: CountingListener;
beforeAll(async () => {
  listener = await startCountingListener();
});
afterAll(() => listener.close());

const KEY = randomBytes(32).toString('base64');
const SHORT = randomBytes(16).toString('base64');

function io(env: Record<string, string>): RecordingIo {
  const home = mkdtempSync(join(tmpdir(), 'gpuprov-codec-cli-'));
  return recordingIo({
    HOME: home,
    PATH: process.env.PATH,
    GPUPROV_STATE_DIR: join(home, 'state'),
    TEMPORAL_ADDRESS: `127.0.0.1:${listener.port}`,
    ...env,
  });
}

/** [what, argv, env, the field the error names, a value that must not be printed]. */
const CASES: [string, string[], Record<string, string>, string, string][] = [
  ['list with a short key', ['list'], { GPUPROV_CODEC_KEYS: `k1=${SHORT}` }, 'GPUPROV_CODEC_KEYS (entry 1)', SHORT],
  ['status with both key sources', ['status', 'gpu1'], { GPUPROV_CODEC_KEYS: `k1=${KEY}`, GPUPROV_CODEC_KEYS_FILE: '/x' }, 'GPUPROV_CODEC_KEYS', KEY],
  ['down with a missing key file', ['down', 'gpu1'], { GPUPROV_CODEC_KEYS_FILE: '/nonexistent/codec-keys' }, 'GPUPROV_CODEC_KEYS_FILE', KEY],
  ['codec-server without a token', ['codec-server'], { GPUPROV_CODEC_KEYS: `k1=${KEY}` }, 'GPUPROV_CODEC_TOKEN', KEY],
  ['codec-server with a short token', ['codec-server'], { GPUPROV_CODEC_KEYS: `k1=${KEY}`, GPUPROV_CODEC_TOKEN: 'abc' }, 'GPUPROV_CODEC_TOKEN', 'abc '],
  ['codec-server without keys', ['codec-server'], { GPUPROV_CODEC_TOKEN: 'a'.repeat(24) }, 'GPUPROV_CODEC_KEYS', 'a'.repeat(24)],
  ['codec-server with a bad origin', ['codec-server', '--cors-origin', 'http://x/path'], {}, '--cors-origin', KEY],
  ['codec-server with a bad port', ['codec-server', '--port', '70000'], {}, '--port', KEY],
];

describe('bad codec configuration', () => {
  it.each(CASES)('%s: exit 2 naming it, nothing contacted, nothing secret printed', async (_what, argv, env, field, secret) => {
    const before = listener.connections();
    const o = io(env);
    const code = await runCli(argv, o);
    expect(code, o.errText).toBe(2);
    expect(o.errText).toContain(field);
    expect(o.errText).toMatch(/fix|e\.g\.|give|set/i);
    expect(`${o.outText}${o.errText}`).not.toContain(secret);
    expect(listener.connections()).toBe(before);
  });
});
