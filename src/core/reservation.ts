/**
 * Reserved capacity in the contract: what `--reservation`, `--capacity-block` and `--queue` ask
 * (`ResourceRequest.reserved`, `VmSpec.reserved`), a reservation an offer launches into
 * (`Offer.reservation`), and a capacity block a cloud offers to buy (`BlockOffering`). Types only;
 * imports nothing, so the contract modules can import it.
 *
 * | ask (`ReservedAsk.kind`) | CLI                                  | what the plan lists                                              | a full / missing one                       |
 * |--------------------------|--------------------------------------|------------------------------------------------------------------|--------------------------------------------|
 * | `reservation` with `id`  | `start --reservation ID`             | that reservation's offers only (`market: 'reserved'`), targeted   | Capacity for that offer, never on-demand   |
 * | `reservation`, no `id`   | `offers --reserved`                  | every usable reservation of the account for the request          | —                                          |
 * | `capacity-block`         | `start --capacity-block OFFERING --yes` | the bought block's offer (bought once, by an idempotent activity) | the purchase refused: Capacity           |
 * | `queue`                  | `start --queue [--wait D]`           | the clouds' queued offers (`Offer.queued`), then the ordinary plan | waited up to `waitMs`, then Capacity      |
 *
 * A reserved offer whose window starts later is waited for durably (the workflow sleeps until
 * `start`); a VM in a window ends by `end` (its TTL is capped, with a warning before).
 */

/** What the request asks of reserved capacity; absent: none (on-demand or spot only). */
export type ReservedAsk =
  | { kind: 'reservation'; id?: string }
  /** `query`: the `offers --capacity-block` question the offering was listed for; the buy asks it again and takes `offeringId`. */
  | { kind: 'capacity-block'; offeringId: string; query?: BlockQuery }
  | { kind: 'queue'; waitMs: number };

/** The vendor's kinds of reservation: AWS capacity reservation, AWS capacity block, GCP specific reservation. */
export type ReservationKind = 'capacity-reservation' | 'capacity-block' | 'specific-reservation';

/** A reservation of the account, as an offer launches into it and `offers --reserved` lists it. */
export interface ReservationInfo {
  id: string;
  kind: ReservationKind;
  /** Instances it holds, and how many of them are free now. */
  total: number;
  free: number;
  /** ISO 8601: when it can first be launched into (a block's start); absent: now. */
  start?: string;
  /** ISO 8601: when it ends and the cloud reclaims its instances; absent: it does not end. */
  end?: string;
  /**
   * ISO 8601: by when an instance in it must be gone for nothing to be billed or killed after the
   * window (a cloud that reclaims before `end` says so: the cloud's fact); absent: `end`.
   */
  leaveBy?: string;
  /** How launching into it is charged, when not the offer's `pricePerHour` (e.g. "paid with the reservation"). */
  priceNote?: string;
}

/** A capacity block a cloud offers to buy (`offers --capacity-block`). */
export interface BlockOffering {
  offeringId: string;
  cloud: string;
  region: string;
  zone?: string;
  instanceType: string;
  count: number;
  /** ISO 8601 window. */
  start: string;
  end: string;
  durationHours: number;
  /** The price of the whole block, paid when bought. */
  upfrontPrice: number;
  currency: string;
}

/** The question `offers --capacity-block` asks (`CloudProvider.blockOfferings`). */
export interface BlockQuery {
  instanceTypes?: string[];
  gpuModel?: string;
  gpuCount?: number;
  regions?: string[];
  /** Instances in the block. */
  count: number;
  durationHours: number;
  /** ISO 8601: the block starts at or after this; absent: now. */
  startAfter?: string;
}

/**
 * What a VM's status says about its reserved capacity (`VmStatus.reserved`, src/core/reserved-window.ts
 * decides it): the reservation or block launched into, a block's purchase, the wait for its window,
 * and the end the window sets.
 */
export interface ReservedState {
  /** The reservation (or bought block) of the offer launched into, with where it is. */
  reservation?: ReservationInfo & { cloud: string; region: string };
  /** A capacity block this VM bought: the offering, what it cost upfront (counted in the spend), when. */
  block?: { offeringId: string; upfrontPrice: number; currency: string; boughtAt: string; inSpend?: boolean };
  /** Waiting for the window to open: since when, until when (ISO); `waitedUntil` once over. */
  wait?: { since: string; until: string; line: string; waitedUntil?: string };
  /** The window's end for this VM: gone by `leaveBy`, its TTL capped at `ttlAt`, warned at `warnAt` (`warnedAt` once done). */
  leave?: { leaveBy: string; ttlAt: string; warnAt: string; warnedAt?: string; line: string };
  /** `--queue`: how long a queued offer is waited on (ms). */
  queueWaitMs?: number;
}
