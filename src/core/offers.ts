/**
 * Pure helpers over offers, shared by workflows, activities and tests. No imports but types:
 * workflow code may import this module (it may import providers only as types).
 */
import type { Location, Market, Offer } from './provider';

/** The market of an offer: `market`, else the older `spot` flag, else on-demand. */
export function marketOf(o: Pick<Offer, 'market' | 'spot'>): Market {
  return o.market ?? (o.spot ? 'spot' : 'on-demand');
}

/** The key suffix of a market: empty for on-demand, so every key recorded before markets stays the same. */
export function marketSuffix(o: Pick<Offer, 'market' | 'spot'> & { reservation?: { id: string } | undefined }): string {
  const m = marketOf(o);
  if (m === 'on-demand') return '';
  // Two reservations of one type in one zone are two offers: a full one never blocks the other.
  return m === 'reserved' && o.reservation ? `/reserved:${o.reservation.id}` : `/${m}`;
}

/** Stable key of an offer, used for blocking and for attempt records (`aws/us-east-1/us-east-1a/g5.xlarge`, `…/g5.xlarge/spot`). */
export function offerKey(o: Pick<Offer, 'cloud' | 'region' | 'zone' | 'instanceType' | 'market' | 'spot' | 'queued' | 'reservation'>): string {
  // A queued offer (`--queue`) is its own offer: its timeout never blocks the ordinary twin.
  return `${o.cloud}/${o.region}/${o.zone ?? '-'}/${o.instanceType}${marketSuffix(o)}${o.queued ? '/queued' : ''}`;
}

/** Where an offer's instance lives. */
export function locationOf(o: Pick<Offer, 'cloud' | 'region' | 'zone'>): Location {
  return o.zone === undefined ? { cloud: o.cloud, region: o.region } : { cloud: o.cloud, region: o.region, zone: o.zone };
}
