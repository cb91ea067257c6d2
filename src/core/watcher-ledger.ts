/**
 * The account watcher's ledger: the VM names this deployment recorded creating in one cloud and
 * region, the positive evidence the sweep needs (src/core/watcher.ts). Every create tells the
 * watcher before it makes anything (`watcherRecordSignal`), and a VM that becomes Ready tells it
 * again, so a workflow terminated mid-create, or after Ready, or deleted outright, leaves its name
 * on record. Pure.
 *
 * | event                                                   | ledger entry of the name                         |
 * |---------------------------------------------------------|--------------------------------------------------|
 * | a create or a Ready VM records it                       | added (or refreshed): recorded and seen now      |
 * | a create records its create key                         | the key joins the name's (the latest 32 kept)    |
 * | a cycle lists an instance, side resource or open owner  | seen now                                         |
 * | nothing of it seen for `ledgerKeepMs`                   | forgotten (its instance is long gone)            |
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
}

/** Create keys kept per name: a failover's attempts in one region, and a few relaunches. */
export const KEYS_KEPT = 32;

/** One create about to be made: its VM name and create key. */
export interface KeyRecord {
  vmName: string;
  createKey: string;
}

/** The ledger with these names (and create keys) recorded at `nowMs`. */
export function recordCreates(ledger: readonly LedgerEntry[], vmNames: readonly string[], nowMs: number, keys: readonly KeyRecord[] = []): LedgerEntry[] {
  const fresh = new Set([...vmNames, ...keys.map((k) => k.vmName)]);
  const kept = ledger.filter((e) => !fresh.has(e.vmName));
  return [
    ...kept,
    ...[...fresh].map((vmName): LedgerEntry => {
      const before = ledger.find((e) => e.vmName === vmName)?.createKeys ?? [];
      const added = keys.filter((k) => k.vmName === vmName).map((k) => k.createKey);
      const createKeys = [...new Set([...before, ...added])].slice(-KEYS_KEPT);
      return { vmName, recordedAtMs: nowMs, seenAtMs: nowMs, ...(createKeys.length > 0 ? { createKeys } : {}) };
    }),
  ];
}

/** The create keys recorded per name, for `planCycle`'s evidence and the sweep's release. */
export function recordedKeys(ledger: readonly LedgerEntry[]): Map<string, Set<string>> {
  return new Map(ledger.flatMap((e) => (e.createKeys?.length ? [[e.vmName, new Set(e.createKeys)] as const] : [])));
}

/** What of a cycle's view the ledger reads: the VM names listed and owned. */
export interface NamesSeen {
  instances: readonly { vmName: string }[];
  sides?: readonly { vmName: string }[];
  owners: readonly { vmName: string }[];
}

function namesIn(view: NamesSeen): Set<string> {
  return new Set([...view.instances, ...(view.sides ?? []), ...view.owners].map((x) => x.vmName));
}

/** The ledger after a cycle's view at `nowMs`: names seen refreshed, names unseen for `ledgerKeepMs` forgotten. */
export function keepLedger(ledger: readonly LedgerEntry[], view: NamesSeen, nowMs: number, t: Pick<WatcherTuning, 'ledgerKeepMs'>): LedgerEntry[] {
  const seen = namesIn(view);
  return ledger.flatMap((e) => {
    if (seen.has(e.vmName)) return [{ ...e, seenAtMs: nowMs }];
    return nowMs - e.seenAtMs >= t.ledgerKeepMs ? [] : [e];
  });
}

/** The recorded names, for `planCycle`'s evidence. */
export function recordedNames(ledger: readonly LedgerEntry[]): Set<string> {
  return new Set(ledger.map((e) => e.vmName));
}
