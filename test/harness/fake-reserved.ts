/**
 * The FakeProvider's reserved capacity (issue 31): reservations it plans and launches into
 * (targeted: a full one, one whose window has not opened or has closed answers Capacity), capacity
 * blocks it sells (`blockOfferings`, `buyBlock` idempotent by key), and a queue (queued twins of
 * its offers, served after `serveAfterMs` or never). Windows are judged by the fake's clock, so a
 * time-skipping test moves them with workflow time.
 */
import type { Offer, ResourceRequest } from '../../src/core/provider';
import type { BlockOffering, BlockQuery, ReservationInfo } from '../../src/core/reservation';

/** A reservation of the fake's account. `info.free` is computed (total less the instances in it). */
export interface FakeReservation {
  info: ReservationInfo;
  region: string;
  zone?: string;
  instanceType: string;
  gpu?: { model: string; count: number };
  /** The on-demand price of the type, shown beside the reservation's (0) price. */
  onDemandPricePerHour?: number;
}

export interface FakeReservedState {
  reservations: FakeReservation[];
  forSale: BlockOffering[];
  /** Purchases by idempotency key. */
  bought: { key: string; reservationId: string }[];
  /** Set: the fake queues (queued twins of every offer); `serveAfterMs` absent: never served. */
  queue?: { serveAfterMs?: number };
}

export const emptyReserved = (): FakeReservedState => ({ reservations: [], forSale: [], bought: [] });

/** A 24 h block of one fake-a/gpu-1 on sale for 2030-01-01, $700 upfront, under `offeringId`. */
export const blockOnSale = (offeringId: string): BlockOffering => ({
  offeringId,
  cloud: 'fake',
  region: 'fake-a',
  instanceType: 'gpu-1',
  count: 1,
  start: '2030-01-01T00:00:00.000Z',
  end: '2030-01-02T00:00:00.000Z',
  durationHours: 24,
  upfrontPrice: 700,
  currency: 'USD',
});

const ms = (iso: string | undefined): number | undefined => (iso === undefined ? undefined : Date.parse(iso));

/** The reservation's info as now seen: `free` from the instances launched into it. */
export function seen(r: FakeReservation, inUse: number): ReservationInfo {
  return { ...r.info, free: Math.max(0, r.info.total - inUse) };
}

function reservedOffer(cloud: string, r: FakeReservation, inUse: number): Offer {
  return {
    cloud,
    region: r.region,
    ...(r.zone ? { zone: r.zone } : {}),
    instanceType: r.instanceType,
    ...(r.gpu ? { gpu: r.gpu } : {}),
    market: 'reserved',
    pricePerHour: 0,
    ...(r.onDemandPricePerHour !== undefined ? { onDemandPricePerHour: r.onDemandPricePerHour } : {}),
    currency: 'USD',
    reservation: { ...seen(r, inUse), priceNote: r.info.priceNote ?? 'billed with the reservation' },
  };
}

/**
 * The plan's reserved part: the offers of the reservation asked for (all usable ones without an
 * id), the queued twins under a queue ask; undefined when the request asks for none (the ordinary
 * plan), [] when it asks for a reservation the account does not have.
 */
export function reservedPlan(
  st: FakeReservedState,
  cloud: string,
  req: ResourceRequest,
  ordinary: Offer[],
  inUse: (id: string) => number,
): Offer[] | undefined {
  const ask = req.reserved;
  if (!ask) return undefined;
  if (ask.kind === 'queue') return st.queue ? [...ordinary.map((o) => ({ ...o, queued: true })), ...ordinary] : ordinary;
  if (ask.kind === 'capacity-block') return [];
  return st.reservations
    .filter((r) => (ask.id === undefined || r.info.id === ask.id) && (!req.regions?.length || req.regions.includes(r.region)))
    .filter((r) => !req.instanceTypes?.length || req.instanceTypes.includes(r.instanceType))
    .map((r) => reservedOffer(cloud, r, inUse(r.info.id)));
}

/** Why a targeted create into `offer`'s reservation is refused (Capacity), or undefined. */
export function refusal(st: FakeReservedState, offer: Offer, inUse: number, nowMs: number): string | undefined {
  const id = offer.reservation?.id;
  const r = st.reservations.find((x) => x.info.id === id);
  if (!r) return `reservation ${id ?? '(none)'} does not exist`;
  if ((ms(r.info.start) ?? -Infinity) > nowMs) return `reservation ${r.info.id} has not started (starts ${r.info.start})`;
  if ((ms(r.info.end) ?? Infinity) <= nowMs) return `reservation ${r.info.id} has ended (${r.info.end})`;
  if (inUse >= r.info.total) return `reservation ${r.info.id} is full (${r.info.total} of ${r.info.total} in use)`;
  return undefined;
}

/** A reservation's instance is reclaimed (stopped) at the window's end. */
export function reclaimed(st: FakeReservedState | undefined, reservationId: string | undefined, nowMs: number): boolean {
  if (!st || reservationId === undefined) return false;
  const end = ms(st.reservations.find((x) => x.info.id === reservationId)?.info.end);
  return end !== undefined && end <= nowMs;
}

/** The blocks for sale that fit the query. */
export function offeringsFor(st: FakeReservedState, q: BlockQuery): BlockOffering[] {
  const after = ms(q.startAfter) ?? -Infinity;
  return st.forSale.filter(
    (b) =>
      b.count >= q.count &&
      b.durationHours === q.durationHours &&
      Date.parse(b.start) >= after &&
      (!q.regions?.length || q.regions.includes(b.region)) &&
      (!q.instanceTypes?.length || q.instanceTypes.includes(b.instanceType)),
  );
}

/** Buy `offering` once per key: the reservation it became (made now, or found by the key). */
export function buy(
  st: FakeReservedState,
  offering: BlockOffering,
  key: string,
  nextId: () => number,
  like?: Pick<FakeReservation, 'gpu' | 'onDemandPricePerHour'>,
): { info: ReservationInfo; made: boolean } {
  const had = st.bought.find((b) => b.key === key);
  const found = had && st.reservations.find((r) => r.info.id === had.reservationId);
  if (found) return { info: found.info, made: false };
  const info: ReservationInfo = {
    id: `fake-cb-${nextId()}`,
    kind: 'capacity-block',
    total: offering.count,
    free: offering.count,
    start: offering.start,
    end: offering.end,
    priceNote: `paid upfront ($${offering.upfrontPrice})`,
  };
  st.reservations.push({ info, region: offering.region, ...(offering.zone ? { zone: offering.zone } : {}), instanceType: offering.instanceType, ...like });
  st.bought.push({ key, reservationId: info.id });
  st.forSale = st.forSale.filter((b) => b.offeringId !== offering.offeringId);
  return { info, made: true };
}
