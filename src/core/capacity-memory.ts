/**
 * The deployment's capacity memory, as pure functions: an offer (cloud, region, instance type, market)
 * that answered Capacity is remembered for a window (default 3 minutes, `GPUPROV_CAPACITY_MEMORY`),
 * and later plans try it last. `capacityMemoryWorkflow` (src/workflows/capacity-memory.ts) holds
 * the entries; the plan step reads them and orders with {@link demoteRemembered}.
 *
 * Demote, not skip: a remembered offer goes to the end of the plan in its original order. When
 * another offer has capacity the launch never reaches it (the same time to Ready as skipping);
 * when capacity came back early, or every offer is remembered, the launch still tries it instead
 * of failing with "no offer" on a guess that is minutes old.
 *
 * | case                                   | result                                        |
 * |----------------------------------------|-----------------------------------------------|
 * | key not remembered, or its window ended | kept in place                                 |
 * | key remembered and live                 | moved after every other offer; reason noted   |
 * | a new entry for a remembered key        | replaces it (the later window counts)         |
 * | more than `max` entries                 | those ending first are dropped                |
 */
import { marketOf, marketSuffix } from './offers';
import type { Market, Offer } from './provider';

/** Karpenter's choice for an exhausted offering; SkyPilot and dstack keep none. */
export const CAPACITY_MEMORY_DEFAULT_MS = 3 * 60_000;
/** Entries kept at most (a full deployment's offer space is far smaller). */
export const CAPACITY_MEMORY_MAX_ENTRIES = 1_000;

/** One remembered Capacity answer. Times are epoch ms. */
export interface CapacityEntry {
  cloud: string;
  region: string;
  instanceType: string;
  /** Absent: on-demand (every entry from before markets existed); a spot answer never demotes the on-demand offer. */
  market?: Market;
  /** When the Capacity answer came. */
  seenAtMs: number;
  /** When the memory forgets it. */
  untilMs: number;
}

/** An offer the plan moved to the end, and why (shown by the plan log and `provision explain`). */
export interface DemotedOffer {
  key: string;
  until: string;
  reason: string;
}

/** What a Capacity answer is remembered by. */
export type CapacityOffer = Pick<Offer, 'cloud' | 'region' | 'instanceType' | 'market' | 'spot' | 'reservation'>;

/** The memory's key: zone-independent (a region out of a type is usually out in every zone), per market (on-demand: no suffix). */
export function capacityKey(o: CapacityOffer): string {
  return `${o.cloud}/${o.region}/${o.instanceType}${marketSuffix(o)}`;
}

/** What a Capacity answer of `offer` is remembered by, alone (on-demand: no `market` field, as before markets). */
export function capacityOfferOf(offer: CapacityOffer): CapacityOffer {
  const market = marketOf(offer);
  return { cloud: offer.cloud, region: offer.region, instanceType: offer.instanceType, ...(market === 'on-demand' ? {} : { market }) };
}

/** The entry a Capacity answer of `offer` is remembered as (on-demand: no `market` field, as before markets). */
export function capacityEntryOf(offer: CapacityOffer, seenAtMs: number, windowMs: number): CapacityEntry {
  return { ...capacityOfferOf(offer), seenAtMs, untilMs: seenAtMs + windowMs };
}

/** The memory workflow's id: one per deployment (namespace × main task queue). */
export function capacityMemoryWorkflowId(taskQueue: string): string {
  return `gpuprov-capacity-memory-${taskQueue}`;
}

/** The memory workflow's input: the entries it starts (or continues as new) with. */
export interface CapacityMemoryInput {
  entries: CapacityEntry[];
}

/**
 * The memory workflow's signature, for the activities that signal-with-start it by name
 * (`capacityMemoryWorkflow`): they type the start with it instead of importing the workflow.
 */
export type CapacityMemoryWorkflow = (input: CapacityMemoryInput) => Promise<void>;

/** Entries whose window has not ended at `nowMs`. */
export function liveEntries(entries: readonly CapacityEntry[], nowMs: number): CapacityEntry[] {
  return entries.filter((e) => e.untilMs > nowMs);
}

/** Add `entry` (replacing its key), drop ended entries, keep at most `max` (those ending last). */
export function remember(entries: readonly CapacityEntry[], entry: CapacityEntry, nowMs: number, max = CAPACITY_MEMORY_MAX_ENTRIES): CapacityEntry[] {
  const key = capacityKey(entry);
  const kept = liveEntries(entries, nowMs).filter((e) => capacityKey(e) !== key);
  const all = entry.untilMs > nowMs ? [...kept, entry] : kept;
  if (all.length <= max) return all;
  return [...all].sort((a, b) => b.untilMs - a.untilMs).slice(0, max);
}

/** The earliest end of a window, or undefined when nothing is remembered. */
export function nextExpiry(entries: readonly CapacityEntry[]): number | undefined {
  return entries.length === 0 ? undefined : Math.min(...entries.map((e) => e.untilMs));
}

/** Offers with live remembered keys moved to the end (order kept within both parts), and the reasons. */
export function demoteRemembered<T extends CapacityOffer>(
  offers: readonly T[],
  entries: readonly CapacityEntry[],
  nowMs: number,
): { offers: T[]; demoted: DemotedOffer[] } {
  const live = new Map(liveEntries(entries, nowMs).map((e) => [capacityKey(e), e]));
  const first: T[] = [];
  const last: T[] = [];
  const demoted: DemotedOffer[] = [];
  for (const o of offers) {
    const e = live.get(capacityKey(o));
    if (!e) {
      first.push(o);
      continue;
    }
    last.push(o);
    const ago = Math.max(0, Math.round((nowMs - e.seenAtMs) / 1000));
    demoted.push({
      key: capacityKey(o),
      until: new Date(e.untilMs).toISOString(),
      reason: `answered Capacity ${ago}s ago (remembered until ${new Date(e.untilMs).toISOString()}): tried last`,
    });
  }
  return { offers: [...first, ...last], demoted };
}

/** `GPUPROV_CAPACITY_MEMORY`: `0` (off), `90s`, `3m`, `1h`, or plain milliseconds; undefined or empty: the default. */
export function parseCapacityMemory(text: string | undefined): number {
  const s = text?.trim() ?? '';
  if (s === '') return CAPACITY_MEMORY_DEFAULT_MS;
  const m = /^(\d+)(ms|s|m|h)?$/.exec(s);
  if (!m) throw new Error(`GPUPROV_CAPACITY_MEMORY=${s} is not a duration: write e.g. 3m, 90s or 0 (off)`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms'] ?? 1;
  return Number(m[1]) * unit;
}
