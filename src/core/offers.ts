/**
 * Pure helpers over offers, shared by workflows, activities and tests. No imports but types:
 * workflow code may import this module (it may import providers only as types).
 */
import type { Location, Offer } from './provider';

/** Stable key of an offer, used for blocking and for attempt records. */
export function offerKey(o: Pick<Offer, 'cloud' | 'region' | 'zone' | 'instanceType'>): string {
  return `${o.cloud}/${o.region}/${o.zone ?? '-'}/${o.instanceType}`;
}

/** Where an offer's instance lives. */
export function locationOf(o: Pick<Offer, 'cloud' | 'region' | 'zone'>): Location {
  return o.zone === undefined ? { cloud: o.cloud, region: o.region } : { cloud: o.cloud, region: o.region, zone: o.zone };
}
