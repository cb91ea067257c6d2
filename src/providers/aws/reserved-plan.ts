/**
 * The AWS plan of `request.reserved` (src/core/reservation.ts): the account's capacity
 * reservations as reserved offers (./reserved.ts says which are listed and how), one
 * DescribeCapacityReservations per region.
 *
 * | ask                          | asked of each region                                              | listed                         |
 * |------------------------------|-------------------------------------------------------------------|--------------------------------|
 * | `reservation` with `id`      | that id (a region without it answers NotFound: none there)       | it, when usable                |
 * | `reservation`, no `id`       | filters `state` (usable states), `instance-type` (catalog types) | every usable one               |
 * | `capacity-block`             | filters `tag:gpuprov-block-offering` = the offering, `tag:gpuprov-owner` = this deployment | the block this deployment bought from it |
 * | `queue`                      | nothing: EC2 does not queue (the ordinary plan)                   | —                              |
 *
 * The filters are applied again to the answer (the state, the type, the tags), so a Describe
 * that ignores one (moto serves ids only) still lists only what fits.
 */
import type { Filter } from '@aws-sdk/client-ec2';
import { OWNER_TAG, type Offer } from '../../core/provider';
import type { ReservedAsk } from '../../core/reservation';
import type { Ec2Api } from './api';
import { CATALOG } from './catalog';
import { BLOCK_OFFERING_TAG, USABLE_STATES, reservedOfferOf, unusable, type CapacityReservationRow } from './reserved';
import type { AwsPricing } from './pricing';

/** What the reserved plan needs of the adapter. */
export interface ReservedPlanContext {
  cloud: string;
  api: Ec2Api;
  deployment: string;
  /** The regions to ask (the request's, else the configured ones). */
  regions: readonly string[];
  pricing: AwsPricing | undefined;
}

/** The reservations of one region the ask names (before `unusable` is applied). */
async function reservationsOf(ctx: ReservedPlanContext, region: string, ask: Exclude<ReservedAsk, { kind: 'queue' }>): Promise<CapacityReservationRow[]> {
  if (ask.kind === 'reservation' && ask.id !== undefined) {
    const id = ask.id;
    return (await ctx.api.reserved.byId(region, id)).filter((r) => r.id === id);
  }
  if (ask.kind === 'capacity-block') {
    const filters: Filter[] = [
      { Name: `tag:${BLOCK_OFFERING_TAG}`, Values: [ask.offeringId] },
      { Name: `tag:${OWNER_TAG}`, Values: [ctx.deployment] },
    ];
    const found = await ctx.api.reserved.matching(region, filters);
    return found.filter((r) => r.tags[BLOCK_OFFERING_TAG] === ask.offeringId && r.tags[OWNER_TAG] === ctx.deployment);
  }
  const filters: Filter[] = [
    { Name: 'state', Values: [...USABLE_STATES] },
    { Name: 'instance-type', Values: CATALOG.map((e) => e.instanceType) },
  ];
  return ctx.api.reserved.matching(region, filters);
}

/**
 * The reserved offers of the ask in every region, by region then AZ; none for an unknown id.
 * `matchOffers` (applied by `planOffers`) judges their GPU, type and price as for any offer.
 */
export async function reservedOffers(ctx: ReservedPlanContext, ask: Exclude<ReservedAsk, { kind: 'queue' }>): Promise<Offer[]> {
  const readAt = new Date().toISOString();
  const [found, live] = await Promise.all([
    Promise.all(ctx.regions.map((r) => reservationsOf(ctx, r, ask))),
    ctx.pricing?.lookup(
      ctx.regions,
      CATALOG.map((e) => e.instanceType),
    ),
  ]);
  const offers: Offer[] = [];
  ctx.regions.forEach((region, i) => {
    const rows = [...(found[i] ?? [])].sort((a, b) => a.zone.localeCompare(b.zone) || a.id.localeCompare(b.id));
    for (const r of rows) {
      const entry = CATALOG.find((e) => e.instanceType === r.instanceType);
      if (!entry || unusable(r, CATALOG) !== undefined) continue;
      offers.push(reservedOfferOf(ctx.cloud, region, r, entry, readAt, live?.(region, r.instanceType)));
    }
  });
  return offers;
}
