/**
 * Live GCP prices: the Cloud Billing Catalog read against its fixture (pages, commitment SKUs skipped,
 * Spot SKUs read as spot prices, per region), the daily disk cache, the fall-back to the dated ladder on a refusal,
 * and the adapter's offers carrying `priceSource`/`pricedAt` either way.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG, PRICE_DATE } from '../../../src/providers/gcp/catalog';
import { GcpPricing, rungPrices, spotPriceKey, type BillingSku } from '../../../src/providers/gcp/pricing';
import { allSkus, impliedPrice, startBillingFixture, type BillingFixture } from '../../fixtures/gcp/billing';
import { planned } from '../planned';
import { startGcpDouble } from './double';

const noToken = async (): Promise<undefined> => undefined;

describe('gcp live prices (Billing Catalog fixture)', () => {
  let fx: BillingFixture;
  let dir: string;
  beforeAll(async () => {
    fx = await startBillingFixture();
    dir = mkdtempSync(join(tmpdir(), 'gpuprov-gcp-prices-'));
  });
  afterAll(async () => {
    await fx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prices each rung as cores + RAM + GPUs from the on-demand SKUs of its region', () => {
    const skus = allSkus() as BillingSku[];
    const us = rungPrices(skus, 'us-central1', CATALOG);
    expect(us['a2-highgpu-1g']).toBe(impliedPrice('A2 Instance', 12, 85, 'Nvidia Tesla A100 GPU', 1));
    expect(us['n1-standard-4']).toBe(impliedPrice('N1 Predefined Instance', 4, 15, 'Nvidia Tesla T4 GPU', 1));
    expect(us['a3-highgpu-8g']).toBe(impliedPrice('A3 Instance', 208, 1872, 'Nvidia H100 80GB GPU', 8));
    expect(us['e2-small']).toBe(impliedPrice('E2 Instance', 2, 2, undefined, 0));
    // Spot prices from the same SKU pages, under `<type>/spot`.
    expect(us[spotPriceKey('n1-standard-4')]).toBe(impliedPrice('N1 Predefined Instance', 4, 15, 'Nvidia Tesla T4 GPU', 1, 'us-central1', 'spot'));
    expect(us[spotPriceKey('n1-standard-4')]).toBeLessThan(us['n1-standard-4']!);
    expect(Object.keys(us).sort()).toEqual(CATALOG.flatMap((e) => [e.machineType, spotPriceKey(e.machineType)]).sort());
    expect(rungPrices(skus, 'europe-west4', CATALOG)['g2-standard-4']).toBe(impliedPrice('G2 Instance', 4, 16, 'Nvidia L4 GPU', 1, 'europe-west4'));
    // Sydney lists only a T4 SKU: no rung is complete there.
    expect(rungPrices(skus, 'australia-southeast1', CATALOG)).toEqual({});
  });

  it('pages through the catalog once per refresh for every region, and caches on disk for a day', async () => {
    const cacheFile = join(dir, 'prices', 'gcp.json');
    const before = fx.pages();
    const lookup = await new GcpPricing({ endpoint: fx.url, token: noToken, cacheFile, pageSize: 20 }).lookup(['us-central1', 'europe-west4'], CATALOG);
    const pages = fx.pages() - before;
    expect(pages).toBe(Math.ceil(allSkus().length / 20));
    expect(lookup('us-central1', 'a2-highgpu-1g')?.pricePerHour).toBe(impliedPrice('A2 Instance', 12, 85, 'Nvidia Tesla A100 GPU', 1));
    expect(Date.parse(lookup('europe-west4', 'n1-standard-4')!.pricedAt)).toBeGreaterThan(0);
    expect(existsSync(cacheFile)).toBe(true);
    await new GcpPricing({ endpoint: fx.url, token: noToken, cacheFile }).lookup(['us-central1'], CATALOG);
    expect(fx.pages() - before).toBe(pages);
  });

  it('a refusal (API disabled) yields no live price', async () => {
    fx.deny(true);
    try {
      const lookup = await new GcpPricing({ endpoint: fx.url, token: noToken }).lookup(['us-central1'], CATALOG);
      expect(lookup('us-central1', 'a2-highgpu-1g')).toBeUndefined();
    } finally {
      fx.deny(false);
    }
  });

  it('the adapter prices offers from the catalog API (api, with the time), else from the dated ladder', async () => {
    const live = await startGcpDouble({ env: { GCP_BILLING_ENDPOINT: fx.url, GPUPROV_STATE_DIR: join(dir, 'state') } });
    try {
      const [a100] = await planned(live.provider, { vmName: 'x', gpu: { model: 'A100', count: 1 }, k8s: false });
      expect(a100).toMatchObject({
        instanceType: 'a2-highgpu-1g',
        pricePerHour: impliedPrice('A2 Instance', 12, 85, 'Nvidia Tesla A100 GPU', 1),
        priceSource: 'api',
      });
      expect(existsSync(join(dir, 'state', 'prices', 'gcp.json'))).toBe(true);
    } finally {
      await live.close();
    }
    const table = await startGcpDouble();
    try {
      const [a100] = await planned(table.provider, { vmName: 'x', gpu: { model: 'A100', count: 1 }, k8s: false });
      const rung = CATALOG.find((e) => e.machineType === 'a2-highgpu-1g')!;
      expect(a100).toMatchObject({ pricePerHour: rung.pricePerHour, priceSource: 'catalog', pricedAt: PRICE_DATE });
    } finally {
      await table.close();
    }
  });
});
