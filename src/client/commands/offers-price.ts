/** How `provision offers` shows where a price came from: `api 3m` (read that long ago) or `catalog 2025-06` (the table's date). */
import type { Offer } from '../../core/provider';

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
