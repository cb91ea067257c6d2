/**
 * Live Compute Engine prices from the Cloud Billing Catalog API
 * (`GET /v1/services/6F81-5844-456A/skus`), cached by {@link PriceCache} for a day. A ladder
 * rung's price is its cores × the family's core SKU + its GiB × the family's RAM SKU + its GPUs ×
 * the accelerator's SKU, each the SKU of the market that lists the region in `serviceRegions`:
 * on-demand, `usageType: OnDemand` ("N1 Predefined Instance Core running in Americas"); spot,
 * `usageType: Preemptible`, the same description after "Spot Preemptible " (Spot VMs are billed at
 * these SKUs, whose price Google moves from time to time: https://cloud.google.com/spot-vms/pricing,
 * https://cloud.google.com/billing/docs/how-to/get-pricing-information-api).
 * Both markets come from the same catalog pages (the list has no usage-type filter), so reading
 * spot prices costs no call; they are stored beside the on-demand ones under `<type>/spot`
 * ({@link spotPriceKey}). A rung with a missing SKU keeps the dated table price on demand and has
 * no spot price; any failure of the call keeps every rung's table price.
 */
import { z } from 'zod';
import { PriceCache, lookupIn, type PriceLookup } from '../price-cache';
import type { CatalogEntry } from './catalog';

/** Compute Engine's service id in the Billing Catalog. */
export const COMPUTE_SERVICE = '6F81-5844-456A';
export const BILLING_URL = 'https://cloudbilling.googleapis.com';

/** Machine family (type prefix) → the SKU description's start for its cores and RAM ("N1 Predefined Instance Core running in …"). */
const FAMILY_SKU: Readonly<Record<string, string>> = {
  e2: 'E2 Instance',
  n1: 'N1 Predefined Instance',
  a2: 'A2 Instance',
  a3: 'A3 Instance',
  g2: 'G2 Instance',
};

/** Compute accelerator type → the GPU SKU description's start ("Nvidia Tesla T4 GPU running in …"). */
const GPU_SKU: Readonly<Record<string, string>> = {
  'nvidia-tesla-t4': 'Nvidia Tesla T4 GPU',
  'nvidia-l4': 'Nvidia L4 GPU',
  'nvidia-tesla-v100': 'Nvidia Tesla V100 GPU',
  'nvidia-tesla-a100': 'Nvidia Tesla A100 GPU',
  'nvidia-a100-80gb': 'Nvidia Tesla A100 80GB GPU',
  'nvidia-h100-80gb': 'Nvidia H100 80GB GPU',
};

const Money = z.object({ currencyCode: z.string(), units: z.string().optional(), nanos: z.number().optional() });
const Sku = z.object({
  description: z.string(),
  category: z.object({ resourceGroup: z.string().optional(), usageType: z.string().optional() }).optional(),
  serviceRegions: z.array(z.string()).default([]),
  pricingInfo: z
    .array(z.object({ pricingExpression: z.object({ usageUnit: z.string(), tieredRates: z.array(z.object({ unitPrice: Money })).default([]) }) }))
    .default([]),
});
export type BillingSku = z.infer<typeof Sku>;
const Page = z.object({ skus: z.array(Sku).default([]), nextPageToken: z.string().optional() });

/** At most this many catalog pages per refresh (Compute lists a few thousand SKUs; a page holds 5000). */
const MAX_PAGES = 20;

/** USD per unit of a SKU: its current pricing, last tier (after any free tier). */
function unitPrice(sku: BillingSku): number | undefined {
  const rate = sku.pricingInfo.at(-1)?.pricingExpression.tieredRates.at(-1)?.unitPrice;
  if (!rate || rate.currencyCode !== 'USD') return undefined;
  return Number(rate.units ?? '0') + (rate.nanos ?? 0) / 1e9;
}

type SkuMarket = 'on-demand' | 'spot';
/** Each market's catalog `usageType` and description prefix. */
const MARKET_SKU: Readonly<Record<SkuMarket, { usageType: string; prefix: string }>> = {
  'on-demand': { usageType: 'OnDemand', prefix: '' },
  spot: { usageType: 'Preemptible', prefix: 'Spot Preemptible ' },
};

/** The cache's key of a type's spot price (its on-demand price is under the type itself). */
export function spotPriceKey(machineType: string): string {
  return `${machineType}/spot`;
}

/** The SKU price of `market` whose description starts with `prefix` + " running in", in `region`. */
function skuPrice(skus: readonly BillingSku[], region: string, prefix: string, market: SkuMarket): number | undefined {
  const m = MARKET_SKU[market];
  const start = `${m.prefix}${prefix} running in`;
  const sku = skus.find((s) => s.category?.usageType === m.usageType && s.description.startsWith(start) && s.serviceRegions.includes(region));
  return sku && unitPrice(sku);
}

/** One rung's hourly price in `region` and `market`, or undefined when a SKU is missing. */
function rungPrice(skus: readonly BillingSku[], region: string, e: CatalogEntry, market: SkuMarket): number | undefined {
  const family = FAMILY_SKU[e.machineType.split('-')[0] ?? ''];
  if (!family) return undefined;
  const core = skuPrice(skus, region, `${family} Core`, market);
  const ram = skuPrice(skus, region, `${family} Ram`, market);
  const gpuSku = e.acceleratorType === undefined ? undefined : GPU_SKU[e.acceleratorType];
  const gpu = e.gpuCount === 0 ? 0 : gpuSku === undefined ? undefined : skuPrice(skus, region, gpuSku, market);
  if (core === undefined || ram === undefined || gpu === undefined) return undefined;
  return Math.round((e.vcpus * core + e.memoryGiB * ram + e.gpuCount * gpu) * 10_000) / 10_000;
}

/**
 * Each ladder rung's hourly price in `region` from the catalog's SKUs: on demand under its type,
 * spot under {@link spotPriceKey}; a price with a missing SKU is left out.
 */
export function rungPrices(skus: readonly BillingSku[], region: string, entries: readonly CatalogEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) {
    const onDemand = rungPrice(skus, region, e, 'on-demand');
    const spot = rungPrice(skus, region, e, 'spot');
    if (onDemand !== undefined) out[e.machineType] = onDemand;
    if (spot !== undefined) out[spotPriceKey(e.machineType)] = spot;
  }
  return out;
}

export interface GcpPricingOptions {
  /** Billing API base URL (tests: a fixture); default {@link BILLING_URL}. */
  endpoint?: string;
  /** An OAuth access token for the call (the Compute credentials'); undefined sends none (a fixture). */
  token: () => Promise<string | undefined>;
  /** The cache file (under the worker's state dir); undefined: memory only. */
  cacheFile?: string;
  pageSize?: number;
}

export class GcpPricing {
  private readonly cache: PriceCache;

  constructor(private readonly opts: GcpPricingOptions) {
    this.cache = new PriceCache(opts.cacheFile ? { file: opts.cacheFile } : {});
  }

  /**
   * Live prices of the ladder's rungs in `regions`, both markets (one catalog download per
   * refresh, cached for a day): `lookup(region, type)` on demand, `lookup(region, spotPriceKey(type))` spot.
   */
  async lookup(regions: readonly string[], entries: readonly CatalogEntry[]): Promise<PriceLookup> {
    let skus: Promise<BillingSku[]> | undefined;
    const all = (): Promise<BillingSku[]> => (skus ??= this.fetchSkus());
    // `/markets`: entries cached before spot prices were read (under `gcp/<region>`) lack them.
    const got = await Promise.all(
      regions.map(async (r) => [r, await this.cache.get(`gcp/${r}/markets`, async () => rungPrices(await all(), r, entries))] as const),
    );
    return lookupIn(new Map(got));
  }

  private async fetchSkus(): Promise<BillingSku[]> {
    const token = await this.opts.token();
    const out: BillingSku[] = [];
    let pageToken = '';
    for (let i = 0; i < MAX_PAGES; i++) {
      const q = new URLSearchParams({ currencyCode: 'USD', pageSize: String(this.opts.pageSize ?? 5000), ...(pageToken ? { pageToken } : {}) });
      const url = `${this.opts.endpoint ?? BILLING_URL}/v1/services/${COMPUTE_SERVICE}/skus?${q.toString()}`;
      const get = (): Promise<Response> => fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(60_000) });
      // Once more on a dropped connection (a pooled keep-alive socket the server closed); else a blip costs an hour of table prices.
      const res = await get().catch(get);
      if (!res.ok) throw new Error(`Cloud Billing Catalog answered ${res.status}`);
      const page = Page.parse(await res.json());
      out.push(...page.skus);
      if (!page.nextPageToken) return out;
      pageToken = page.nextPageToken;
    }
    throw new Error(`Cloud Billing Catalog: more than ${MAX_PAGES} pages`);
  }
}
