/**
 * The account watcher's ledger: the VM names this deployment recorded creating in one cloud and
 * region, the positive evidence the sweep needs (src/core/watcher.ts), kept in ledger pages
 * (src/core/ledger-pages.ts). Every create tells the name's page before it makes anything
 * (`watcherRecordSignal`), and a VM that becomes Ready tells it again, so a workflow terminated
 * mid-create, or after Ready, or deleted outright, leaves its name on record. Pure.
 *
 * | event                                                   | ledger entry of the name                         |
 * |---------------------------------------------------------|--------------------------------------------------|
 * | a create or a Ready VM records it                       | added (or refreshed): recorded and seen now      |
 * | a create records its create key                         | the key joins the name's (the latest 32 kept)    |
 * | a create records its create key, on spot or not        | `spot` set or cleared: the latest create decides |
 * | a cycle lists it unowned, or asks and it is still there | seen now                                         |
 * | asked about, nothing of it seen for `ledgerKeepMs`      | forgotten (its instance is long gone)            |
 *
 * A look asks about the names unseen for half `ledgerKeepMs` (`expiringOf`) and tells each page
 * which of them are still listed or owned (`presentIn`, src/core/watcher-digest.ts), so the
 * ledger is kept without the region's whole view passing through any history.
 *
 * Hazard: an entry may only be forgotten once nothing of its name has been listed for longer
 * than any gap between two returning cycles (the quiet window), else a live orphan would turn
 * unknown and never be swept.
 */
import type { WatcherTuning } from './watcher-api';

export interface LedgerEntry {
  vmName: string;
  /** Epoch ms of the latest record (a create about to be made, a VM at Ready). */
  recordedAtMs: number;
  /** Epoch ms the name was last recorded or listed (instance, side resource or open owner). */
  seenAtMs: number;
  /**
   * The create keys recorded for the name, latest last (at most {@link KEYS_KEPT}; absent in
   * ledgers from before them): an instance of the name with another key is not this deployment's.
   */
  createKeys?: string[];
  /** The latest create recorded with a key was on the spot market (the watcher's `spot` cadence). */
  spot?: true;
}

/** Create keys kept per name: a failover's attempts in one region, and a few relaunches. */
export const KEYS_KEPT = 32;

/** One create about to be made: its VM name and create key. */
export interface KeyRecord {
  vmName: string;
  createKey: string;
}

/** The ledger with these names (and create keys) recorded at `nowMs`. */
export function recordCreates(
  ledger: readonly LedgerEntry[],
  vmNames: readonly string[],
  nowMs: number,
  keys: readonly KeyRecord[] = [],
  spotNames: readonly string[] = [],
): LedgerEntry[] {
  const fresh = new Set([...vmNames, ...keys.map((k) => k.vmName)]);
  const spot = new Set(spotNames);
  const kept = ledger.filter((e) => !fresh.has(e.vmName));
  return [
    ...kept,
    ...[...fresh].map((vmName): LedgerEntry => {
      const entry = ledger.find((e) => e.vmName === vmName);
      const added = keys.filter((k) => k.vmName === vmName).map((k) => k.createKey);
      const createKeys = [...new Set([...(entry?.createKeys ?? []), ...added])].slice(-KEYS_KEPT);
      // A Ready VM's record has no key: it keeps what its create said.
      const onSpot = added.length > 0 ? spot.has(vmName) : entry?.spot === true;
      return { vmName, recordedAtMs: nowMs, seenAtMs: nowMs, ...(createKeys.length > 0 ? { createKeys } : {}), ...(onSpot ? { spot: true as const } : {}) };
    }),
  ];
}

/** The create keys recorded per name, for `planCycle`'s evidence and the sweep's release. */
export function recordedKeys(ledger: readonly LedgerEntry[]): Map<string, Set<string>> {
  return new Map(ledger.flatMap((e) => (e.createKeys?.length ? [[e.vmName, new Set(e.createKeys)] as const] : [])));
}

/** Ledger names one cycle asks about at most (the longest unseen first); the rest wait for a later cycle and are not forgotten meanwhile. */
export const EXPIRING_ASKED = 200;

/**
 * The names a cycle asks the look about (`expiring`, answered by the digest's `present`): those
 * not seen for half `ledgerKeepMs`, longest unseen first, at most {@link EXPIRING_ASKED}.
 */
export function expiringOf(ledger: readonly LedgerEntry[], nowMs: number, t: Pick<WatcherTuning, 'ledgerKeepMs'>): string[] {
  return ledger
    .filter((e) => nowMs - e.seenAtMs >= t.ledgerKeepMs / 2)
    .sort((a, b) => a.seenAtMs - b.seenAtMs)
    .slice(0, EXPIRING_ASKED)
    .map((e) => e.vmName);
}

/**
 * The ledger after a cycle at `nowMs`: names `seen` (listed unowned, or asked and present)
 * refreshed; a name `asked` about and not seen for `ledgerKeepMs` forgotten. A name not asked
 * this cycle is never forgotten by it.
 */
export function keepLedger(
  ledger: readonly LedgerEntry[],
  seen: ReadonlySet<string>,
  asked: ReadonlySet<string>,
  nowMs: number,
  t: Pick<WatcherTuning, 'ledgerKeepMs'>,
): LedgerEntry[] {
  return ledger.flatMap((e) => {
    if (seen.has(e.vmName)) return [{ ...e, seenAtMs: nowMs }];
    return asked.has(e.vmName) && nowMs - e.seenAtMs >= t.ledgerKeepMs ? [] : [e];
  });
}

/** The recorded names, for `planCycle`'s evidence. */
export function recordedNames(ledger: readonly LedgerEntry[]): Set<string> {
  return new Set(ledger.map((e) => e.vmName));
}

/** The names whose latest recorded create was on spot (sorted). */
export function spotNamesOf(ledger: readonly LedgerEntry[]): string[] {
  return ledger
    .filter((e) => e.spot)
    .map((e) => e.vmName)
    .sort();
}
