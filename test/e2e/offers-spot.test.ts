/**
 * `provision offers --spot` as a user types it, against a worker whose clouds are the harness's
 * fake (which sells spot) and a second fake, `plain`, which does not: spot offers with their
 * market, the spot price and the on-demand price beside it; under `--spot` the plain cloud is
 * named as selling no spot, with the fix; under `--spot auto` spot offers come first, then
 * on-demand (the plain cloud's included).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import type { Offer } from '../../src/core/provider';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { runTestCli, type CliResult } from '../harness/cli';
import { FakeProvider, defaultFakeOffers } from '../harness/fake-provider';
import { requireServer, startTestWorker, type TestWorker } from '../harness/temporal';

describe.skipIf(!requireServer())('provision offers --spot', () => {
  let root: string;
  let worker: TestWorker;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-offers-spot-'));
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const plain = new FakeProvider({ name: 'plain', offers: defaultFakeOffers('plain') });
    const providers = [new FakeProvider({ spot: { priceFactor: 0.4 } }), plain];
    worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry(providers), ssh, owner: 'default' }) });
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const offers = (...args: string[]): Promise<CliResult> => runTestCli(root, worker.taskQueue, ['offers', ...args]);

  it('--spot: the spot offers with MARKET, the spot PRICE and ON-DEMAND beside it; the plain cloud sells no spot', async () => {
    const r = await offers('--spot');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^CLOUD\s+REGION\s+ZONE\s+TYPE\s+GPU\s+MARKET\s+PRICE\s+ON-DEMAND\s+PRICED$/);
    expect(lines[1]).toMatch(/^fake\s+fake-a\s+-\s+gpu-1\s+-\s+spot\s+\$0\.800\/h\s+\$2\.00\/h\s+-$/);
    expect(lines.filter((l) => l.startsWith('fake '))).toHaveLength(4);
    expect(lines.filter((l) => /\bon-demand\b/.test(l) && l.startsWith('fake'))).toEqual([]);
    expect(r.out).toContain('4 offers. next: npx provision start --name gpu1 --spot');
    expect(r.err).toContain('plain: skipped (InvalidRequest): plain sells no spot (on-demand only) (use --spot auto (on-demand when no spot offer is left)');
    expect(r.err).toMatch(/\n {2}fix: \S/);
  });

  it('--spot auto --json: every spot offer first, then on-demand, each naming its market and prices', async () => {
    const r = await offers('--spot', 'auto', '--json');
    expect(r.code, r.err).toBe(0);
    const plan = JSON.parse(r.out) as { offers: Offer[]; skipped: unknown[] };
    const markets = plan.offers.map((o) => o.market);
    expect(markets.slice(0, 4)).toEqual(['spot', 'spot', 'spot', 'spot']);
    expect(markets.slice(4).every((m) => m === 'on-demand')).toBe(true);
    expect(plan.offers.filter((o) => o.cloud === 'plain').map((o) => o.market)).toEqual(['on-demand', 'on-demand', 'on-demand', 'on-demand']);
    expect(plan.offers[0]).toMatchObject({ cloud: 'fake', instanceType: 'gpu-1', market: 'spot', pricePerHour: 0.8, onDemandPricePerHour: 2 });
    expect(plan.offers.find((o) => o.market === 'on-demand' && o.cloud === 'fake')).not.toHaveProperty('onDemandPricePerHour');
    expect(plan.skipped).toEqual([]);
  });

  it('without --spot: on-demand only, the table as before', async () => {
    const r = await offers();
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^CLOUD\s+REGION\s+ZONE\s+TYPE\s+GPU\s+PRICE\s+PRICED$/);
    expect(r.out).not.toContain('spot');
  });
});
