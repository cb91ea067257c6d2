/**
 * Live AWS prices: the Price List client against the pricing fixture (moto has no `pricing`), the
 * daily disk cache, the fall-back to the dated catalog on a refusal, and the adapter's offers
 * carrying `priceSource`/`pricedAt` either way.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../../../src/providers/aws/catalog';
import { AwsPricing, hourlyPrice, productFilters } from '../../../src/providers/aws/pricing';
import { livePrice, product, startPricingFixture, type PricingFixture } from '../../fixtures/aws/pricing';
import { motoMissing } from '../../harness/moto';
import { planned } from '../planned';
import { startAwsDouble } from './double';

const CREDS = { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' };

describe('aws live prices (Price List fixture)', () => {
  let fx: PricingFixture;
  let dir: string;
  beforeAll(async () => {
    fx = await startPricingFixture();
    dir = mkdtempSync(join(tmpdir(), 'gpuprov-aws-prices-'));
  });
  afterAll(async () => {
    await fx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('filters as the brief of the Price List asks, and reads the hourly USD price', () => {
    expect(productFilters('us-east-1', 'p5.48xlarge').map((f) => `${f.Field}=${f.Value}`)).toEqual([
      'instanceType=p5.48xlarge',
      'location=US East (N. Virginia)',
      'operatingSystem=Linux',
      'tenancy=Shared',
      'preInstalledSw=NA',
      'capacitystatus=Used',
    ]);
    expect(productFilters('me-central-1', 't3.micro')[1]).toEqual({ Type: 'TERM_MATCH', Field: 'regionCode', Value: 'me-central-1' });
    expect(hourlyPrice([JSON.stringify(product('p5.48xlarge', 'us-east-1'))])).toBe(livePrice('p5.48xlarge'));
    expect(hourlyPrice([])).toBeUndefined();
  });

  it('reads each type once, caches on disk for a day, and a second worker reuses the file', async () => {
    const cacheFile = join(dir, 'prices', 'aws.json');
    const before = fx.calls();
    const lookup = await new AwsPricing({ endpoint: fx.url, credentials: CREDS, cacheFile }).lookup(['us-east-1'], ['p5.48xlarge', 'g4dn.xlarge', 'x9.nope']);
    expect(fx.calls() - before).toBe(3);
    expect(lookup('us-east-1', 'p5.48xlarge')?.pricePerHour).toBe(livePrice('p5.48xlarge'));
    expect(lookup('us-east-1', 'x9.nope')).toBeUndefined();
    expect(Date.parse(lookup('us-east-1', 'g4dn.xlarge')!.pricedAt)).toBeGreaterThan(0);
    expect(existsSync(cacheFile)).toBe(true);
    expect(JSON.parse(readFileSync(cacheFile, 'utf8'))).toMatchObject({ 'aws/us-east-1': { prices: { 'p5.48xlarge': livePrice('p5.48xlarge') } } });
    const again = await new AwsPricing({ endpoint: fx.url, credentials: CREDS, cacheFile }).lookup(['us-east-1'], ['p5.48xlarge']);
    expect(fx.calls() - before).toBe(3);
    expect(again('us-east-1', 'p5.48xlarge')).toEqual(lookup('us-east-1', 'p5.48xlarge'));
  });

  it('a refusal (no pricing:GetProducts) yields no live price and is not retried within the hour', async () => {
    fx.deny(true);
    try {
      const pricing = new AwsPricing({ endpoint: fx.url, credentials: CREDS, cacheFile: join(dir, 'denied.json') });
      const before = fx.calls();
      expect((await pricing.lookup(['us-west-2'], ['g4dn.xlarge']))('us-west-2', 'g4dn.xlarge')).toBeUndefined();
      const after = fx.calls();
      expect(after).toBeGreaterThan(before);
      expect((await pricing.lookup(['us-west-2'], ['g4dn.xlarge']))('us-west-2', 'g4dn.xlarge')).toBeUndefined();
      expect(fx.calls()).toBe(after);
    } finally {
      fx.deny(false);
    }
  });

  describe.skipIf(motoMissing())('the adapter on moto', () => {
    it('prices offers from the Price List (api, with the time), else from the dated catalog', async () => {
      const live = await startAwsDouble({ pricingEndpoint: fx.url, priceCacheFile: join(dir, 'adapter.json') });
      try {
        const [t4] = await planned(live.provider, { vmName: 'x', gpu: { model: 'T4', count: 1 }, k8s: false });
        expect(t4).toMatchObject({ instanceType: 'g4dn.xlarge', pricePerHour: livePrice('g4dn.xlarge'), priceSource: 'api' });
        expect(Date.parse(t4!.pricedAt!)).toBeGreaterThan(Date.parse('2026-01-01'));
      } finally {
        await live.close();
      }
      const table = await startAwsDouble({ pricingEndpoint: false });
      try {
        const [t4] = await planned(table.provider, { vmName: 'x', gpu: { model: 'T4', count: 1 }, k8s: false });
        const entry = CATALOG.find((e) => e.instanceType === 'g4dn.xlarge')!;
        expect(t4).toMatchObject({ pricePerHour: entry.pricePerHour, priceSource: 'catalog', pricedAt: entry.priceDate });
      } finally {
        await table.close();
      }
    });
  });
});
