/**
 * Every worker imports every adapter (through the default registry); the heavy cloud SDKs
 * (@aws-sdk/client-ec2 ~80 MB, @google-cloud/compute ~130 MB of RSS) load only when a client of
 * that cloud is made. Checked in a fresh process: this one may have loaded them for other tests.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SRC = path.join(__dirname, '..', '..', '..', 'src');

describe('cloud SDKs are loaded lazily', () => {
  it('importing the activities and building the registry without credentials loads no cloud SDK', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-lazy-sdk-'));
    try {
      const script = `
        require(${JSON.stringify(path.join(SRC, 'activities', 'index.ts'))});
        const { registryFromEnv } = require(${JSON.stringify(path.join(SRC, 'providers', 'default-registry.ts'))});
        const names = registryFromEnv({ HOME: ${JSON.stringify(home)}, GPUPROV_LOCAL_ROOT: ${JSON.stringify(path.join(home, 'local'))} }).names();
        const sdks = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](@aws-sdk|@google-cloud[\\\\/]compute|google-gax)[\\\\/]/.test(f));
        process.stdout.write(JSON.stringify({ names, sdks }));
      `;
      const { stdout } = await run(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, '-e', script], {
        env: { PATH: process.env.PATH, HOME: home },
        timeout: 60_000,
      });
      const out = JSON.parse(stdout) as { names: string[]; sdks: string[] };
      expect(out.names).not.toContain('aws');
      expect(out.names).not.toContain('gcp');
      expect(out.sdks).toEqual([]);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  }, 90_000);
});
