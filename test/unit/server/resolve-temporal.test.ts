/** Where the CLI connects: configured (env or temporal.toml) → a local server → the embedded default. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../../src/ports';
import { embeddedConfig, resolveTemporal } from '../../../src/server/embedded';
import { requireServer } from '../../harness/temporal';

let home: string;

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-resolve-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** A clean environment: none of the machine's TEMPORAL_* variables or config files. */
async function cleanEnv(extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  return {
    HOME: home,
    PATH: process.env.PATH,
    GPUPROV_STATE_DIR: path.join(home, 'state'),
    GPUPROV_EMBEDDED_PORT: String(await freePort()),
    GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
    ...extra,
  };
}

function writeToml(text: string): void {
  const dir = path.join(home, '.config', 'temporalio');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'temporal.toml'), text);
}

describe('embeddedConfig', () => {
  it('defaults to 127.0.0.1:7233 and UI 8233 under the state dir', () => {
    const cfg = embeddedConfig({ HOME: home });
    expect(cfg).toMatchObject({
      address: '127.0.0.1:7233',
      uiUrl: 'http://localhost:8233',
      dbFile: path.join(home, '.local', 'state', 'gpuprov', 'temporal.db'),
    });
  });

  it('rejects a port override that is not a port', () => {
    expect(() => embeddedConfig({ HOME: home, GPUPROV_EMBEDDED_PORT: 'seven' })).toThrow(/GPUPROV_EMBEDDED_PORT=seven/);
  });
});

describe('resolveTemporal', () => {
  it('uses TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE when set', async () => {
    const t = await resolveTemporal(await cleanEnv({ TEMPORAL_ADDRESS: 'temporal.example:7233', TEMPORAL_NAMESPACE: 'prod' }));
    expect(t).toMatchObject({ kind: 'configured', source: 'env', address: 'temporal.example:7233', namespace: 'prod' });
  });

  it('uses the default temporal.toml profile', async () => {
    writeToml('[profile.default]\naddress = "tc.example:7233"\nnamespace = "team-a"\n');
    const t = await resolveTemporal(await cleanEnv());
    expect(t).toMatchObject({ kind: 'configured', source: 'profile', address: 'tc.example:7233', namespace: 'team-a' });
  });

  it('uses the profile named by TEMPORAL_PROFILE, and TEMPORAL_ADDRESS overrides its address', async () => {
    writeToml('[profile.default]\naddress = "a.example:7233"\n[profile.cloud]\naddress = "b.example:7233"\nnamespace = "ns-b"\napi_key = "k"\n');
    const t = await resolveTemporal(await cleanEnv({ TEMPORAL_PROFILE: 'cloud' }));
    expect(t).toMatchObject({ kind: 'configured', address: 'b.example:7233', namespace: 'ns-b' });
    if (t.kind !== 'configured') throw new Error('unreachable');
    // An API key turns TLS on (envconfig's rule).
    expect(t.connectionOptions.tls).toBe(true);
    const o = await resolveTemporal(await cleanEnv({ TEMPORAL_PROFILE: 'cloud', TEMPORAL_ADDRESS: 'c.example:7233' }));
    expect(o).toMatchObject({ kind: 'configured', source: 'env', address: 'c.example:7233', namespace: 'ns-b' });
  });

  it('falls back to the embedded default when nothing is configured or answering', async () => {
    const env = await cleanEnv();
    const t = await resolveTemporal(env);
    expect(t).toEqual({
      kind: 'embedded',
      address: `127.0.0.1:${env.GPUPROV_EMBEDDED_PORT}`,
      namespace: 'default',
      uiUrl: `http://localhost:${env.GPUPROV_EMBEDDED_UI_PORT}`,
    });
  });

  it.skipIf(!requireServer())('uses a server already answering on the embedded address', async () => {
    const port = inject('temporalAddress').split(':')[1]!;
    const t = await resolveTemporal(await cleanEnv({ GPUPROV_EMBEDDED_PORT: port }));
    expect(t).toMatchObject({ kind: 'local', address: `127.0.0.1:${port}`, ours: false });
  });
});
