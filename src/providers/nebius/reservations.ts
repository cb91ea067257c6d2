/**
 * Nebius reserved capacity (`--reservation ID`, `offers --reserved`): the capacity block groups
 * (nebius.capacity.v1 CapacityBlockGroupService.List) as `reserved` offers, and the create's
 * `spec.reservation_policy` that launches into one only. As the `nebius` SDK's descriptors
 * (0.6.29) say: `ReservationPolicy {policy AUTO|FORBID|STRICT, reservation_ids}` ("capacity
 * block groups, order matters"); STRICT takes only the named groups, so a full group is an error
 * of that create (Capacity for the offer, ./errors.ts), never an on-demand VM (AUTO would fall
 * back). Nebius sells no block through the API (the service is Get/List only) and queues nothing.
 *
 * | a capacity block group of the project                        | offers                                               |
 * |--------------------------------------------------------------|------------------------------------------------------|
 * | state not ACTIVE or ALLOCATING (SHUTTING, INACTIVE, unknown)  | none: it takes no instance                           |
 * | no `resource_affinity.compute_v1.platform`                    | none: no compute platform to launch on               |
 * | `status.region` not the region planned, or not the asked id   | none                                                 |
 * | otherwise                                                     | one per preset of its platform in that region: free = current_limit − usage (0 listed too), window = `current_continuous_interval` |
 *
 * Launching into a group adds nothing to what the group bills (`pricePerHour` 0, the on-demand
 * price beside it). (?) The descriptors call `current_limit` the group's "current quota limit" and
 * `usage` its "quota usage" without a unit; they are shown as they come (FREE of total). (?) The
 * groups are listed under the region's project id (`parent_id`), as the other Nebius lists are.
 */
import type { Offer, ResourceRequest } from '../../core/provider';
import type { ReservationInfo } from '../../core/reservation';
import type { CapacityBlockGroup, CreateInstanceRequest } from './api';
import { splitInstanceType } from './map';

/** How launching into a group is billed (the offer's `pricePerHour` is 0). */
export const GROUP_PRICE_NOTE = 'billed with the capacity block group';

const USABLE = new Set(['STATE_ACTIVE', 'STATE_ALLOCATING', '1', '2']);

/** The reservation a group is, or undefined when it cannot take a launch in `region` (the table above). */
export function groupInfo(g: CapacityBlockGroup, region: string): (ReservationInfo & { platform: string }) | undefined {
  const s = g.status;
  const platform = s?.resource_affinity?.compute_v1?.platform;
  if (!s || !platform || !USABLE.has(s.state) || s.region !== region) return undefined;
  const window = s.current_continuous_interval;
  return {
    id: g.metadata.id,
    kind: 'capacity-block',
    total: s.current_limit,
    free: Math.max(0, s.current_limit - s.usage),
    ...(window?.start_time ? { start: window.start_time } : {}),
    ...(window?.end_time ? { end: window.end_time } : {}),
    priceNote: GROUP_PRICE_NOTE,
    platform,
  };
}

/**
 * The reserved offers of `region` for a reservation ask: one per on-demand offer (priced) of each
 * usable group's platform, only `req.reserved.id`'s group when it names one; none for another ask.
 */
export function reservedOffers(groups: readonly CapacityBlockGroup[], onDemand: readonly Offer[], region: string, req: ResourceRequest): Offer[] {
  const ask = req.reserved;
  if (ask?.kind !== 'reservation') return [];
  return groups.flatMap((g) => {
    const info = groupInfo(g, region);
    if (!info || (ask.id !== undefined && info.id !== ask.id)) return [];
    const { platform, ...reservation } = info;
    return onDemand
      .filter((o) => o.market !== 'spot' && splitInstanceType(o.instanceType).platform === platform)
      .map((o): Offer => ({
        ...o,
        market: 'reserved',
        pricePerHour: 0,
        ...(o.pricePerHour !== undefined ? { onDemandPricePerHour: o.pricePerHour } : {}),
        reservation,
      }));
  });
}

/** The create's `reservation_policy` for a reserved offer: STRICT into its group only; nothing for other offers. */
export function reservationPolicy(offer: Pick<Offer, 'market' | 'reservation'>): Pick<CreateInstanceRequest['spec'], 'reservation_policy'> {
  if (offer.market !== 'reserved' || !offer.reservation) return {};
  return { reservation_policy: { policy: 'STRICT', reservation_ids: [offer.reservation.id] } };
}
