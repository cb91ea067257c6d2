/**
 * Live EC2 on-demand prices from the AWS Price List API (`pricing` GetProducts, served from
 * us-east-1), one call per catalog type and region, cached by {@link PriceCache} for a day.
 * Any failure (no `pricing:GetProducts` permission, no answer) leaves the dated table in force.
 */
import type * as PricingSdk from '@aws-sdk/client-pricing';
import type { Filter, PricingClient } from '@aws-sdk/client-pricing';
import { z } from 'zod';
import { PriceCache, lookupIn, type PriceLookup } from '../price-cache';
import { connectionConfig, type AwsConnection } from './clients';

/** The Price List `location` of each region (the API filters by these names). Others filter by `regionCode`. */
const LOCATIONS: Readonly<Record<string, string>> = {
  'us-east-1': 'US East (N. Virginia)',
  'us-east-2': 'US East (Ohio)',
  'us-west-1': 'US West (N. California)',
  'us-west-2': 'US West (Oregon)',
  'ca-central-1': 'Canada (Central)',
  'eu-central-1': 'EU (Frankfurt)',
  'eu-west-1': 'EU (Ireland)',
  'eu-west-2': 'EU (London)',
  'eu-west-3': 'EU (Paris)',
  'eu-north-1': 'EU (Stockholm)',
  'ap-south-1': 'Asia Pacific (Mumbai)',
  'ap-northeast-1': 'Asia Pacific (Tokyo)',
  'ap-northeast-2': 'Asia Pacific (Seoul)',
  'ap-southeast-1': 'Asia Pacific (Singapore)',
  'ap-southeast-2': 'Asia Pacific (Sydney)',
  'sa-east-1': 'South America (Sao Paulo)',
};

const CONCURRENCY = 4;

let sdk: typeof PricingSdk | undefined;

/** @aws-sdk/client-pricing, loaded with the first lookup (like client-ec2 in api.ts: only a worker with AWS credentials carries it). */
function pricingSdk(): typeof PricingSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose (see above)
  sdk ??= require('@aws-sdk/client-pricing') as typeof PricingSdk;
  return sdk;
}

/** One Price List product (each `PriceList` entry is a JSON string of this shape). */
const Product = z.object({
  product: z.object({ attributes: z.object({ instanceType: z.string() }) }),
  terms: z.object({
    OnDemand: z.record(
      z.string(),
      z.object({ priceDimensions: z.record(z.string(), z.object({ unit: z.string(), pricePerUnit: z.object({ USD: z.string() }) })) }),
    ),
  }),
});

/** The GetProducts filters for a Linux, shared-tenancy, no-software, on-demand EC2 type in a region. */
export function productFilters(region: string, instanceType: string): Filter[] {
  const where = LOCATIONS[region];
  const term = (Field: string, Value: string): Filter => ({ Type: 'TERM_MATCH', Field, Value });
  return [
    term('instanceType', instanceType),
    where ? term('location', where) : term('regionCode', region),
    term('operatingSystem', 'Linux'),
    term('tenancy', 'Shared'),
    term('preInstalledSw', 'NA'),
    term('capacitystatus', 'Used'),
  ];
}

/** The hourly USD price in a GetProducts answer's `PriceList`; undefined when none is listed. */
export function hourlyPrice(priceList: readonly unknown[]): number | undefined {
  for (const raw of priceList) {
    // The SDK hands each product over as a JSON string (a `String` object for its lazy JSON type).
    const p = Product.parse(typeof raw === 'string' || raw instanceof String ? JSON.parse(String(raw)) : raw);
    for (const term of Object.values(p.terms.OnDemand)) {
      for (const d of Object.values(term.priceDimensions)) {
        const usd = Number(d.pricePerUnit.USD);
        if (d.unit === 'Hrs' && Number.isFinite(usd) && usd > 0) return usd;
      }
    }
  }
  return undefined;
}

/** The connection's endpoint is the Price List one (in us-east-1). */
export interface AwsPricingOptions extends AwsConnection {
  /** The cache file (under the worker's state dir); undefined: memory only. */
  cacheFile?: string;
}

export class AwsPricing {
  private client: PricingClient | undefined;
  private readonly cache: PriceCache;

  constructor(private readonly opts: AwsPricingOptions = {}) {
    this.cache = new PriceCache(opts.cacheFile ? { file: opts.cacheFile } : {});
  }

  private pricingClient(): PricingClient {
    this.client ??= new (pricingSdk().PricingClient)({
      region: 'us-east-1',
      maxAttempts: 2,
      ...connectionConfig(this.opts),
    });
    return this.client;
  }

  /** Live prices of `types` in `regions`, as far as the Price List answered (cached for a day). */
  async lookup(regions: readonly string[], types: readonly string[]): Promise<PriceLookup> {
    const entries = await Promise.all(regions.map(async (r) => [r, await this.cache.get(`aws/${r}`, () => this.fetchRegion(r, types))] as const));
    return lookupIn(new Map(entries));
  }

  private async fetchRegion(region: string, types: readonly string[]): Promise<Record<string, number>> {
    const prices: Record<string, number> = {};
    const client = this.pricingClient();
    const { GetProductsCommand } = pricingSdk();
    const queue = [...types];
    const worker = async (): Promise<void> => {
      for (let t = queue.shift(); t !== undefined; t = queue.shift()) {
        const out = await client.send(new GetProductsCommand({ ServiceCode: 'AmazonEC2', Filters: productFilters(region, t), MaxResults: 10 }));
        const price = hourlyPrice(Array.isArray(out.PriceList) ? (out.PriceList as unknown[]) : []);
        if (price !== undefined) prices[t] = price;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return prices;
  }
}
