/**
 * EC2 reserved capacity, pure: On-Demand Capacity Reservations (ODCR) and Capacity Blocks for ML
 * as reserved offers, the targeted create's options, and what a reserved create's errors block.
 * The calls are in ./reserved-api.ts, the plan's and the purchase's use of them in ./reserved-plan.ts
 * and ./blocks.ts.
 *
 * A reservation (DescribeCapacityReservations) becomes one offer in its AZ (`zone`), `market:
 * 'reserved'`, `reservation`: total = TotalInstanceCount, free = AvailableInstanceCount, end =
 * EndDate. The plan lists a reservation when:
 *
 * | reservation                                         | listed | why                                                        |
 * |-----------------------------------------------------|--------|------------------------------------------------------------|
 * | state `active`, `scheduled`, `payment-pending`      | yes    | launchable now, or at its start (a bought block's payment) |
 * | any other state (`expired`, `cancelled`, `failed`, `payment-failed`, `assessing`, `pending`, …) | no | nothing can launch into it |
 * | InstancePlatform not `Linux/UNIX`                   | no     | gpuprov boots Ubuntu AMIs: EC2 refuses the platform        |
 * | Tenancy not `default`                               | no     | gpuprov launches with default tenancy                      |
 * | InstanceType not in the catalog (./catalog.ts)      | no     | no GPU facts or image family to launch it with             |
 * | free = 0                                            | yes    | `offers --reserved` shows it; its create answers Capacity  |
 *
 * | ReservationType  | kind                   | start        | leaveBy            | pricePerHour | priceNote                                 |
 * |------------------|------------------------|--------------|--------------------|--------------|-------------------------------------------|
 * | `default` (ODCR) | `capacity-reservation` | if scheduled | — (`end`)          | 0            | billed with the reservation, used or not  |
 * | `capacity-block` | `capacity-block`       | StartDate    | EndDate − 30 min   | 0            | paid upfront with the capacity block      |
 *
 * An ODCR is billed at the on-demand rate whether instances run in it or not, so launching into it
 * adds nothing (`onDemandPricePerHour` beside says the rate); at its end "instances running in the
 * reserved capacity continue to run uninterrupted" as ordinary on-demand instances
 * (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-reservations-using.html), so it
 * sets no earlier `leaveBy`. A block: "Thirty minutes before the reservation expires, we begin to
 * terminate any instances that are still running in the Capacity Block"
 * (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-using.html; the EventBridge
 * warning comes 40 minutes before the end), so `leaveBy` is `end` − 30 minutes.
 *
 * Create (RunInstances): `CapacityReservationSpecification.CapacityReservationTarget.
 * CapacityReservationId` = the reservation, and for a block also `InstanceMarketOptions.MarketType
 * 'capacity-block'` ("To use your Capacity Block, you must specify the Capacity Block reservation ID
 * when launching instances"; https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-launch.html),
 * in the reservation's AZ (the offer's zone: `prepare` keeps that AZ's subnet only). A targeted
 * launch never falls back to open capacity: a full reservation is an error, never an on-demand VM.
 * Its errors (./errors.ts): ReservationCapacityExceeded ("the targeted Capacity Reservation does
 * not [have] enough available instance capacity"), InvalidCapacityReservationId.NotFound (gone),
 * InvalidLaunchTargets ("verify the capacity for the Capacity Reservation selected or verify the
 * ID"), InvalidCapacityReservationState.PendingActivation ("your Capacity Block is not active yet")
 * and InsufficientInstanceCapacity are Capacity; a reserved create scopes Capacity and Unavailable
 * to its offer (`reservedScoped`): the reservation's answer says nothing of on-demand capacity.
 */
import type { RunInstancesCommandInput } from '@aws-sdk/client-ec2';
import { ProviderError } from '../../core/errors';
import type { Offer } from '../../core/provider';
import type { ReservationInfo } from '../../core/reservation';
import type { LivePrice } from '../price-cache';
import type { CatalogEntry } from './catalog';
import { offerFor } from './map';

/** The platform every reservation gpuprov launches into (and every block it buys) is for. */
export const LINUX_PLATFORM = 'Linux/UNIX';

/** States a reservation can be launched into now or later (the header's table). */
export const USABLE_STATES: readonly string[] = ['active', 'scheduled', 'payment-pending'];

/** How long before a block's end EC2 begins to terminate its instances. */
export const BLOCK_RECLAIM_MS = 30 * 60_000;

/** Tag on a bought block's reservation: `createKeyOf` the purchase's idempotency key (./blocks.ts). */
export const BLOCK_KEY_TAG = 'gpuprov-block-key';
/** Tag on a bought block's reservation: the offering it was bought from (a capacity-block plan finds it by this). */
export const BLOCK_OFFERING_TAG = 'gpuprov-block-offering';

export const ODCR_NOTE = 'billed with the reservation (the on-demand rate, used or not)';
export const BLOCK_NOTE = 'paid upfront with the capacity block';

/** One capacity reservation as DescribeCapacityReservations answers it (zod-checked in ./reserved-api.ts). */
export interface CapacityReservationRow {
  id: string;
  instanceType: string;
  zone: string;
  platform?: string;
  tenancy?: string;
  total: number;
  free: number;
  state: string;
  /** ISO 8601. */
  start?: string;
  end?: string;
  /** `default` or `capacity-block`. */
  reservationType?: string;
  tags: Record<string, string>;
}

/** One capacity block offering as DescribeCapacityBlockOfferings answers it. */
export interface BlockOfferingRow {
  offeringId: string;
  instanceType: string;
  zone: string;
  count: number;
  start: string;
  end: string;
  durationHours: number;
  /** A decimal string, the price of the whole block. */
  upfrontFee: string;
  currency: string;
}

/** Why a reservation is not listed (the header's table), or undefined when it is. */
export function unusable(r: CapacityReservationRow, catalog: readonly CatalogEntry[]): string | undefined {
  if (!USABLE_STATES.includes(r.state)) return `state ${r.state}`;
  if (r.platform !== undefined && r.platform !== LINUX_PLATFORM) return `platform ${r.platform}`;
  if (r.tenancy !== undefined && r.tenancy !== 'default') return `tenancy ${r.tenancy}`;
  if (!catalog.some((e) => e.instanceType === r.instanceType)) return `type ${r.instanceType} is not in gpuprov's AWS catalog`;
  return undefined;
}

/** The reservation as the contract carries it (the header's second table). */
export function reservationInfoOf(r: CapacityReservationRow): ReservationInfo {
  const block = r.reservationType === 'capacity-block';
  const start = block || r.state === 'scheduled' || r.state === 'payment-pending' ? r.start : undefined;
  return {
    id: r.id,
    kind: block ? 'capacity-block' : 'capacity-reservation',
    total: r.total,
    free: r.free,
    ...(start !== undefined ? { start } : {}),
    ...(r.end !== undefined ? { end: r.end } : {}),
    ...(block && r.end !== undefined ? { leaveBy: new Date(Date.parse(r.end) - BLOCK_RECLAIM_MS).toISOString() } : {}),
    priceNote: block ? BLOCK_NOTE : ODCR_NOTE,
  };
}

/** The reserved offer of a usable reservation of `region`, read at `readAt`; `live` is the type's on-demand price when known. */
export function reservedOfferOf(cloud: string, region: string, r: CapacityReservationRow, e: CatalogEntry, readAt: string, live?: LivePrice): Offer {
  const od = offerFor(cloud, region, e, live);
  return {
    ...od,
    zone: r.zone,
    pricePerHour: 0,
    ...(od.pricePerHour !== undefined ? { onDemandPricePerHour: od.pricePerHour } : {}),
    priceSource: 'api',
    pricedAt: readAt,
    market: 'reserved',
    reservation: reservationInfoOf(r),
  };
}

/** RunInstances' options of a reserved create: targeted at the offer's reservation (the header). */
export function reservedLaunch(offer: Offer): Pick<RunInstancesCommandInput, 'CapacityReservationSpecification' | 'InstanceMarketOptions'> {
  const r = offer.reservation;
  if (!r) throw new ProviderError('InvalidRequest', `AWS create: the reserved offer of ${offer.instanceType} names no reservation`);
  return {
    CapacityReservationSpecification: { CapacityReservationTarget: { CapacityReservationId: r.id } },
    ...(r.kind === 'capacity-block' ? { InstanceMarketOptions: { MarketType: 'capacity-block' } } : {}),
  };
}

/**
 * A reserved create's error, scoped to its offer (whose key carries the AZ and `/reserved`):
 * Capacity and Unavailable say nothing of the type on demand or of another reservation.
 */
export function reservedScoped(err: unknown): unknown {
  if (!(err instanceof ProviderError) || (err.kind !== 'Capacity' && err.kind !== 'Unavailable') || err.block === 'offer') return err;
  return new ProviderError(err.kind, err.message, { block: 'offer', ...(err.code ? { code: err.code } : {}), cause: err.cause ?? err });
}
