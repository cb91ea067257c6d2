/**
 * `provision offers --gpu … --json` as a user types it, against AWS on moto: the CLI as a separate
 * process with a temporary HOME, its embedded default (dev server + worker daemon) configured
 * with AWS credentials for moto only. `H100:1` is exactly one GPU, so the 8-GPU p5.48xlarge is
 * never offered for it; `H100:8+` offers it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Offer } from '../../src/core/provider';
import { freePort } from '../../src/ports';
import { motoMissing, startMoto, type MotoServer } from '../harness/moto';
import { requireServer } from '../harness/temporal';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

interface Plan {
  offers: Offer[];
  skipped: { cloud: string; kind: string; message: string }[];
}

describe.skipIf(!requireServer() || motoMissing())('provision offers against AWS on moto', () => {
  let moto: MotoServer;
  let env: NodeJS.ProcessEnv;
  const provision = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
    try {
      const r = await run(process.execPath, [join(ROOT, 'bin', 'provision.js'), ...args], { env, cwd: ROOT, timeout: 240_000 });
      return { code: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? '' };
    }
  };

  beforeAll(async () => {
    moto = await startMoto();
    const home = mkdtempSync(join(tmpdir(), 'gpuprov-e2e-offers-'));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    env = {
      PATH: process.env.PATH,
      HOME: home,
      TEMPORAL_CLI_PATH: inject('temporalCliPath'),
      GPUPROV_EMBEDDED_PORT: String(await freePort()),
      GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
      // The worker daemon inherits these: AWS is moto, and the only cloud.
      GPUPROV_CLOUDS: 'aws',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_ENDPOINT_URL_EC2: moto.url,
      AWS_REGIONS: 'us-east-1',
    };
  });
  afterAll(async () => {
    await provision('server', 'stop');
    await moto?.close();
  });

  it('--gpu H100:1 offers no 8-GPU type and says how to ask; H100:8+ offers p5.48xlarge', async () => {
    const exact = await provision('offers', '--gpu', 'H100:1', '--json');
    expect(exact.code, exact.err).toBe(1);
    const failed = JSON.parse(exact.out) as Plan & { ok: false; error: { message: string } };
    expect(failed.ok).toBe(false);
    // A failure of its own (not 'no cloud could list') carries no plan: show what it said.
    expect(failed.offers, `${exact.out}\n${exact.err}`).toEqual([]);
    // Each cloud that listed nothing says why, and how to ask for what it has.
    expect(failed.skipped.map((s) => `${s.cloud}: ${s.message}`).join('\n')).toContain('aws: no offer has exactly 1 H100; GPU counts here: 8 (p5.48xlarge)');
    expect(exact.out).not.toMatch(/"instanceType":"p5\.48xlarge"/);

    const one = await provision('offers', '--gpu', 'T4:1', '--json');
    expect(one.code, one.err).toBe(0);
    const t4 = JSON.parse(one.out) as Plan;
    expect(t4.offers.map((o) => `${o.instanceType}:${o.gpu?.count}`)).toEqual(['g4dn.xlarge:1', 'g4dn.2xlarge:1']);

    const atLeast = await provision('offers', '--gpu', 'H100:8+', '--json');
    expect(atLeast.code, atLeast.err).toBe(0);
    const h100 = JSON.parse(atLeast.out) as Plan;
    expect(h100.offers.map((o) => `${o.cloud}/${o.instanceType}:${o.gpu?.count}`)).toEqual(['aws/p5.48xlarge:8']);
    expect(h100.skipped).toEqual([]);

    const bad = await provision('offers', '--gpu', 'H100:8++', '--json');
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.out)).toMatchObject({ ok: false, error: { kind: 'InvalidInput', field: '--gpu' } });
  });
});
