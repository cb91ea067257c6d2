/**
 * GCP specific reservations (`--reservation NAME`, `offers --reserved`): the project's
 * reservations (`reservations.aggregatedList`) as `reserved` offers, and the insert's
 * `reservationAffinity` that launches into one by name, never into any other capacity.
 *
 * | a reservation of the project                                   | offer                                                  |
 * |----------------------------------------------------------------|--------------------------------------------------------|
 * | status not READY (CREATING, UPDATING, DELETING)                 | none: it cannot take an instance yet                   |
 * | `specificReservationRequired` unset                            | none: Compute refuses to target it by name ("can not be targeted as specificReservationRequired is not set"); an ordinary on-demand launch may consume it anyway |
 * | no `instanceProperties` (made from an instance template)        | none: its machine type is not in the answer            |
 * | `instanceProperties.localSsds`                                 | none: an instance must bring the same local SSDs, which gpuprov does not attach |
 * | outside the request's regions, or not the asked name            | none                                                   |
 * | otherwise                                                      | one offer in its zone: free = count − inUseCount (0 listed too), end = `deleteAtTime` |
 *
 * The asked id is the reservation's name, or its path (`[projects/P/]zones/Z/reservations/NAME`).
 * Launching into it costs nothing on top of what the reservation bills (`pricePerHour` 0, the
 * on-demand price beside it). The key of a name-targeted affinity is
 * `compute.googleapis.com/reservation-name` (the Discovery document's `ReservationAffinity`).
 * Refusals (full, missing, not READY, not fitting) come back with code CONDITION_NOT_MET and the
 * reservation named only in the message: ./errors.ts reads them as Capacity for the offer.
 */
import { ProviderError } from '../../core/errors';
import type { Offer, ResourceRequest } from '../../core/provider';
import type { ReservationInfo } from '../../core/reservation';
import type { PriceLookup } from '../price-cache';
import type { GcpReservation } from './api';
import { CATALOG, type CatalogEntry } from './catalog';
import { CLOUD, lastSegment, regionOfZone } from './map';

/** The affinity key that targets a reservation by its name. */
export const RESERVATION_NAME_KEY = 'compute.googleapis.com/reservation-name';

/** How launching into a reservation is billed (the offer's `pricePerHour` is 0). */
export const RESERVED_PRICE_NOTE = 'billed with the reservation (its machines are paid whether used or not)';

/** The reservation named by `id` (a name or a `zones/Z/reservations/NAME` path)? */
export function isAsked(r: Pick<GcpReservation, 'name' | 'zone'>, id: string): boolean {
  const m = /(?:^|\/)zones\/([^/]+)\/reservations\/([^/]+)$/.exec(id);
  if (!m) return r.name === id;
  return r.name === m[2] && lastSegment(r.zone ?? '') === m[1];
}

/** Why a reservation cannot take a targeted launch from gpuprov (the header's table), or undefined when it can. */
export function unusable(r: GcpReservation): string | undefined {
  const props = r.specificReservation?.instanceProperties;
  if (r.status !== 'READY') return `status ${r.status ?? 'unknown'}`;
  if (r.specificReservationRequired !== true) return 'not a specific reservation';
  if (!props?.machineType) return 'no instance properties';
  if (props.localSsds?.length) return 'reserves local SSDs';
  if (!r.zone) return 'no zone';
  return undefined;
}

/**
 * The reserved offers of `all` for the request: only `ask.id`'s when it names one, else every
 * usable reservation of the project, within `req.regions` when it names regions. `live` prices
 * the on-demand price shown beside (else the dated ladder).
 */
export function reservedOffers(all: readonly GcpReservation[], req: ResourceRequest, id: string | undefined, live?: PriceLookup): Offer[] {
  const regions = req.regions?.length ? new Set(req.regions) : undefined;
  return all
    .filter((r) => (id === undefined || isAsked(r, id)) && unusable(r) === undefined)
    .filter((r) => !regions || regions.has(regionOfZone(lastSegment(r.zone!))))
    .map((r) => reservedOffer(r, live))
    .sort((a, b) => a.zone!.localeCompare(b.zone!) || a.reservation!.id.localeCompare(b.reservation!.id));
}

/** The ladder rung a reservation's machine (and attached GPU) matches, if any. */
function rungOf(machineType: string, acceleratorType: string | undefined): CatalogEntry | undefined {
  return (
    CATALOG.find((e) => e.machineType === machineType && (acceleratorType === undefined || e.acceleratorType === acceleratorType)) ??
    (acceleratorType === undefined ? undefined : CATALOG.find((e) => e.attachAccelerator && e.acceleratorType === acceleratorType))
  );
}

function reservedOffer(r: GcpReservation, live: PriceLookup | undefined): Offer {
  const zone = lastSegment(r.zone!);
  const region = regionOfZone(zone);
  const props = r.specificReservation!.instanceProperties!;
  const machineType = lastSegment(props.machineType!);
  const accel = props.guestAccelerators?.find((a) => a.acceleratorType);
  const acceleratorType = accel?.acceleratorType ? lastSegment(accel.acceleratorType) : undefined;
  const rung = rungOf(machineType, acceleratorType);
  // Only N1 machines take GPUs as guest accelerators; A2/A3/G2 have theirs built in.
  const attach = machineType.startsWith('n1-') && acceleratorType !== undefined;
  const gpuCount = attach ? (accel?.acceleratorCount ?? 1) : rung?.gpuCount;
  const onDemand = live?.(region, machineType)?.pricePerHour ?? (rung?.machineType === machineType ? rung.pricePerHour : undefined);
  const total = Number(r.specificReservation!.count ?? 0);
  const reservation: ReservationInfo = {
    id: r.name,
    kind: 'specific-reservation',
    total,
    free: Math.max(0, total - Number(r.specificReservation!.inUseCount ?? 0)),
    ...(r.deleteAtTime && !Number.isNaN(Date.parse(r.deleteAtTime)) ? { end: new Date(r.deleteAtTime).toISOString() } : {}),
    priceNote: RESERVED_PRICE_NOTE,
  };
  return {
    cloud: CLOUD,
    region,
    zone,
    instanceType: machineType,
    ...(rung?.gpuModel && gpuCount
      ? { gpu: { model: rung.gpuModel, count: gpuCount, ...(rung.gpuMemoryGiB === undefined ? {} : { memoryGiB: rung.gpuMemoryGiB }) } }
      : {}),
    ...(rung?.machineType === machineType ? { vcpus: rung.vcpus, memoryGiB: rung.memoryGiB } : {}),
    pricePerHour: 0,
    ...(onDemand === undefined ? {} : { onDemandPricePerHour: onDemand }),
    currency: 'USD',
    spot: false,
    market: 'reserved',
    reservation,
    extra: { reservation: r.name, ...(attach ? { acceleratorType, acceleratorCount: gpuCount ?? 1 } : {}) },
  };
}

/**
 * The insert fields of a reserved offer: an affinity to its reservation by name, so the instance
 * launches there or not at all (never into other capacity, never on demand). Nothing for other offers.
 */
export function reservationFields(offer: Offer): Record<string, unknown> {
  if (offer.market !== 'reserved') return {};
  const name = (offer.extra as { reservation?: unknown } | undefined)?.reservation ?? offer.reservation?.id;
  if (typeof name !== 'string' || !name) throw new ProviderError('InvalidRequest', 'gcp: a reserved offer names no reservation');
  return { reservationAffinity: { consumeReservationType: 'SPECIFIC_RESERVATION', key: RESERVATION_NAME_KEY, values: [name] } };
}
