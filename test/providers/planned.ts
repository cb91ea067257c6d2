/**
 * What `planOffers` makes of one adapter's plan: its offers through the shared matcher. Provider
 * tests read plans this way, since adapters list and the matcher judges.
 */
import { explainNoMatch, matchOffers } from '../../src/core/offer-match';
import type { CloudProvider, Offer, ResourceRequest } from '../../src/core/provider';

/** The offers `planOffers` would keep from this provider for `req`. */
export async function planned(provider: CloudProvider, req: ResourceRequest): Promise<Offer[]> {
  return matchOffers(await provider.plan(req), req).offers;
}

/** Why `planOffers` would skip this provider for `req` (undefined when something matches). */
export async function whyNothing(provider: CloudProvider, req: ResourceRequest): Promise<string | undefined> {
  const m = matchOffers(await provider.plan(req), req);
  return m.offers.length > 0 ? undefined : explainNoMatch(req, m.dropped);
}
