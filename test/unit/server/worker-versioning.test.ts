import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleBuildId, packageVersion, workerVersioning } from '../../../src/server/worker-versioning';

describe('worker deployment options', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-versioning-test-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bundle = (name: string, code: string): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, code);
    return file;
  };

  it('takes the version from gpuprov package.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(packageVersion()).toBe(pkg.version);
  });

  it('derives the build id from the bundle bytes: same code same id, changed code a new one', () => {
    const a = bundle('a.js', 'workflow A');
    const a2 = bundle('a2.js', 'workflow A');
    const b = bundle('b.js', 'workflow B');
    const sha = createHash('sha256').update('workflow A').digest('hex');
    expect(bundleBuildId(a, '1.2.3')).toBe(`1.2.3-${sha.slice(0, 12)}`);
    expect(bundleBuildId(a2, '1.2.3')).toBe(bundleBuildId(a, '1.2.3'));
    expect(bundleBuildId(b, '1.2.3')).not.toBe(bundleBuildId(a, '1.2.3'));
  });

  it('is undefined when versioning is off, and versioned with a PINNED default when on', () => {
    const a = bundle('c.js', 'workflow C');
    expect(workerVersioning({}, 'gpuprov', a)).toBeUndefined();
    expect(workerVersioning({ GPUPROV_WORKER_VERSIONING: '1' }, 'gpuprov', a)).toEqual({
      useWorkerVersioning: true,
      version: { deploymentName: 'gpuprov', buildId: bundleBuildId(a) },
      defaultVersioningBehavior: 'PINNED',
    });
  });
});
