/**
 * How `provision offers` shows its offers: where a price came from (`api 3m`, read that long ago,
 * or `catalog 2025-06`, the table's date), and under `--spot` each offer's market with the
 * on-demand price beside the spot price.
 */
import { marketOf } from '../../core/offers';
import type { Offer, SpotMode } from '../../core/provider';
import { price } from '../output';

/** A compact age: `42s`, `3m`, `5h`, `2d`. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** The PRICED column: the source and the price's age (api) or date (catalog); `-` when unpriced or unknown. */
export function priceOrigin(o: Pick<Offer, 'pricePerHour' | 'priceSource' | 'pricedAt'>, now: number): string {
  if (o.pricePerHour === undefined || !o.priceSource) return '-';
  if (o.priceSource === 'catalog') return `catalog ${o.pricedAt ?? '?'}`;
  const at = Date.parse(o.pricedAt ?? '');
  return Number.isNaN(at) ? 'api' : `api ${age(now - at)}`;
}

/** The table's rows (header first); under `--spot` with MARKET and ON-DEMAND beside PRICE, the price charged. */
export function offerRows(offers: readonly Offer[], now: number, spot: SpotMode | undefined): string[][] {
  const head = ['CLOUD', 'REGION', 'ZONE', 'TYPE', 'GPU', ...(spot ? ['MARKET'] : []), 'PRICE', ...(spot ? ['ON-DEMAND'] : []), 'PRICED'];
  const row = (o: Offer): string[] => [
    o.cloud,
    o.region,
    o.zone ?? '-',
    o.instanceType,
    o.gpu ? `${o.gpu.model}:${o.gpu.count}` : '-',
    ...(spot ? [marketOf(o)] : []),
    price(o.pricePerHour),
    ...(spot ? [marketOf(o) === 'on-demand' ? price(o.pricePerHour) : price(o.onDemandPricePerHour)] : []),
    priceOrigin(o, now),
  ];
  return [head, ...offers.map(row)];
}
