/**
 * Live prices read from a vendor's price list, cached on disk (one JSON file per cloud under the
 * worker's state dir) and refreshed daily. A failed refresh is remembered for an hour, so a worker
 * whose credentials may not read the price list does not ask on every plan; callers then use their
 * dated table. Only prices are stored: no credentials, no request data.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';

/** A price read from the vendor's price list at `pricedAt` (ISO time). */
export interface LivePrice {
  pricePerHour: number;
  pricedAt: string;
}

/** The live price of one type in one region, when the price list was read; else undefined (use the table). */
export type PriceLookup = (region: string, type: string) => LivePrice | undefined;

const DAY_MS = 24 * 3_600_000;
const RETRY_AFTER_FAILURE_MS = 3_600_000;

const CacheFile = z.record(z.string(), z.object({ pricedAt: z.string(), prices: z.record(z.string(), z.number()) }));
type Entry = z.infer<typeof CacheFile>[string];

export interface PriceCacheOptions {
  /** The cache file; undefined keeps prices in memory only. */
  file?: string;
  maxAgeMs?: number;
  now?: () => number;
}

export class PriceCache {
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private readonly failedAt = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<Entry | undefined>>();
  private memory: Record<string, Entry> = {};

  constructor(private readonly opts: PriceCacheOptions = {}) {
    this.maxAgeMs = opts.maxAgeMs ?? DAY_MS;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The prices under `key` (type → USD/hour) and when they were read: from the cache when younger
   * than a day, else from `fetch` (then saved). Undefined when `fetch` failed within the last hour.
   */
  async get(key: string, fetch: () => Promise<Record<string, number>>): Promise<Entry | undefined> {
    const cached = this.read()[key];
    if (cached && this.now() - Date.parse(cached.pricedAt) < this.maxAgeMs) return cached;
    const failed = this.failedAt.get(key);
    if (failed !== undefined && this.now() - failed < RETRY_AFTER_FAILURE_MS) return undefined;
    let p = this.inflight.get(key);
    if (!p) {
      p = this.refresh(key, fetch).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async refresh(key: string, fetch: () => Promise<Record<string, number>>): Promise<Entry | undefined> {
    try {
      const prices = await fetch();
      const entry: Entry = { pricedAt: new Date(this.now()).toISOString(), prices };
      this.write(key, entry);
      this.failedAt.delete(key);
      return entry;
    } catch {
      this.failedAt.set(key, this.now());
      return undefined;
    }
  }

  private read(): Record<string, Entry> {
    if (!this.opts.file) return this.memory;
    try {
      return CacheFile.parse(JSON.parse(readFileSync(this.opts.file, 'utf8')));
    } catch {
      return this.memory;
    }
  }

  private write(key: string, entry: Entry): void {
    this.memory = { ...this.read(), [key]: entry };
    if (!this.opts.file) return;
    try {
      mkdirSync(dirname(this.opts.file), { recursive: true });
      const tmp = `${this.opts.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(this.memory, null, 1) + '\n');
      renameSync(tmp, this.opts.file);
    } catch {
      // An unwritable state dir only costs a refetch next time; the prices in memory still serve.
    }
  }
}

/** The lookup over cached entries keyed by region. */
export function lookupIn(byRegion: ReadonlyMap<string, Entry | undefined>): PriceLookup {
  return (region, type) => {
    const e = byRegion.get(region);
    const p = e?.prices[type];
    return e && p !== undefined && p > 0 ? { pricePerHour: p, pricedAt: e.pricedAt } : undefined;
  };
}
