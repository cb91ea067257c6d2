import { describe, expect, it } from 'vitest';
import { uiCodecEndpointFromEnv } from '../../../src/codec';
import { InputError } from '../../../src/core/errors';
import { checkServerConfig } from '../../../src/server/embedded';
import { devServerArgs } from '../../../src/server/dev-server';

describe("the embedded Web UI's codec endpoint", () => {
  it('GPUPROV_CODEC_UI_ENDPOINT: an http(s) URL, trailing slashes dropped; unset is none', () => {
    expect(uiCodecEndpointFromEnv({})).toBeUndefined();
    expect(uiCodecEndpointFromEnv({ GPUPROV_CODEC_UI_ENDPOINT: 'http://127.0.0.1:8089/tok-0123456789abcdef/' })).toBe(
      'http://127.0.0.1:8089/tok-0123456789abcdef',
    );
    expect(uiCodecEndpointFromEnv({ GPUPROV_CODEC_UI_ENDPOINT: 'https://codec.example.com' })).toBe('https://codec.example.com');
  });

  it.each(['127.0.0.1:8089', 'ftp://x/y', 'http://x/?token=secret-value-123', 'not a url'])('%s: InputError naming the variable, not the value', (v) => {
    let err: unknown;
    try {
      checkServerConfig({ HOME: '/tmp', GPUPROV_CODEC_UI_ENDPOINT: v });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).field).toBe('GPUPROV_CODEC_UI_ENDPOINT');
    expect((err as Error).message).not.toContain(v);
  });

  it('the dev server gets --ui-codec-endpoint, except headless', () => {
    const args = devServerArgs({ port: 1234, dbFile: '/x.db', uiCodecEndpoint: 'http://127.0.0.1:8089/t' });
    expect(args.join(' ')).toContain('--ui-codec-endpoint http://127.0.0.1:8089/t');
    expect(devServerArgs({ port: 1234, dbFile: '/x.db' })).not.toContain('--ui-codec-endpoint');
    expect(devServerArgs({ port: 1234, dbFile: '/x.db', headless: true, uiCodecEndpoint: 'http://x' })).not.toContain('--ui-codec-endpoint');
  });
});
