/**
 * The hedged launch (`--parallel N`), as pure decisions: which offers start next, and what one
 * attempt's end means for the others. `runHedged` (src/workflows/hedged-launch.ts) is the glue that runs them.
 *
 * Two attempts of one VM must never share a "lane": a cloud's identity lookup (observe, delete
 * by identity, create-or-adopt) and its side resources are keyed by VM name, so a second
 * attempt in the same lane would adopt the first one's instance, or its compensation would delete
 * the winner. The lane is the region on clouds whose lookups and side resources are regional, and
 * the whole cloud elsewhere (GCP and DigitalOcean firewalls, Verda scripts are global per VM).
 *
 * | an attempt ended …                      | row       | the others                          |
 * |-----------------------------------------|-----------|-------------------------------------|
 * | ready, no winner yet                    | `win`     | cancelled, then compensated         |
 * | ready, after a win, abort or cancel     | `lose`    | (it is compensated like a failure)  |
 * | failed, cancelled (user or a win)       | `stop`    | nothing new starts                  |
 * | failed, decision abort (fatal kind)     | `abort`   | cancelled, then compensated         |
 * | failed, decision continue               | `refill`  | run on; free slots take next offers |
 */
import { laneKindOf } from './clouds';
import { isBlocked, type SearchState } from './search';
import type { Offer } from './provider';

/** Bounds of `--parallel` (VmSpec.parallel). */
export const PARALLEL_MIN = 1;
export const PARALLEL_MAX = 8;

/** The slice of identity space one attempt occupies: the region or the whole cloud, by the cloud table's `lane` (src/core/clouds.ts). */
export function laneOf(offer: Pick<Offer, 'cloud' | 'region'>): string {
  return laneKindOf(offer.cloud) === 'region' ? `${offer.cloud}/${offer.region}` : offer.cloud;
}

/** The effective N: undefined → 1, clamped to PARALLEL_MIN..PARALLEL_MAX. */
export function parallelOf(n: number | undefined): number {
  if (n === undefined || !Number.isFinite(n)) return PARALLEL_MIN;
  return Math.min(PARALLEL_MAX, Math.max(PARALLEL_MIN, Math.floor(n)));
}

/** An attempt in flight (running or compensating): it holds a slot and a lane. */
export interface InFlight {
  /** Index of its offer in the plan. */
  offerIndex: number;
  offer: Offer;
}

/**
 * The offers to start now, in plan order: not yet taken this round, not blocked, not in a lane an
 * in-flight attempt holds (nor one already picked), at most `parallel - inFlight.length` of them.
 */
export function offersToStart(
  search: SearchState,
  taken: ReadonlySet<number>,
  inFlight: readonly InFlight[],
  parallel: number,
): { index: number; offer: Offer }[] {
  const free = parallel - inFlight.length;
  const lanes = new Set(inFlight.map((f) => laneOf(f.offer)));
  const out: { index: number; offer: Offer }[] = [];
  for (let i = 0; i < search.offers.length && out.length < free; i++) {
    const offer = search.offers[i]!;
    if (taken.has(i) || isBlocked(offer, search.blocked) || lanes.has(laneOf(offer))) continue;
    lanes.add(laneOf(offer));
    out.push({ index: i, offer });
  }
  return out;
}

/** True when no offer of the round is left to start, now or once a lane frees up. */
export function roundExhausted(search: SearchState, taken: ReadonlySet<number>): boolean {
  return search.offers.every((o, i) => taken.has(i) || isBlocked(o, search.blocked));
}

export type SettleRow = 'win' | 'lose' | 'stop' | 'abort' | 'refill';

/** The row of the table above for one attempt's end; `stopping`: a winner, an abort or a user cancel came first. */
export function settle(end: { ok: boolean; cancelled: boolean; next?: 'continue' | 'abort' }, stopping: boolean): SettleRow {
  if (end.ok) return stopping ? 'lose' : 'win';
  if (end.cancelled) return 'stop';
  return end.next === 'abort' ? 'abort' : 'refill';
}
