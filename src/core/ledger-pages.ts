/**
 * The ledger in pages: the creates this deployment recorded in one cloud and region live in
 * {@link LEDGER_PAGES} entity workflows (`ledgerPageWorkflow`, ID from {@link ledgerPageId}), each
 * holding the names that hash to it, so neither the account watcher's history nor any one page
 * grows with the whole fleet. Creates record their names in their page before anything is made;
 * the watcher's look (`watchCycle`) asks the pages only about what needs evidence. Pure.
 *
 * | who                    | message to the page                      | page does                                        |
 * |------------------------|------------------------------------------|--------------------------------------------------|
 * | a create, a Ready VM   | `watcherRecord` (signal-with-start)      | `recordCreates` (src/core/watcher-ledger.ts)     |
 * | a watcher's first look after it carried a ledger | `ledgerMerge` (signal-with-start) | `mergeLedger`: newest times, keys joined |
 * | every look             | `ledgerSummary` query                    | answers its size, spot names, expiring names     |
 * | a look with unowned names | `ledgerEvidence` query                | answers which of them it recorded, with keys     |
 * | a look that asked      | `ledgerSeen` signal                      | `keepLedger`: refresh the present, forget the gone |
 *
 * Hazard: {@link LEDGER_PAGES} and {@link pageOf} fix where every name's evidence lives; changing
 * either hides recorded names from the sweep (they turn unknown, never deleted).
 */
import type { LedgerEntry } from './watcher-ledger';
import { KEYS_KEPT, expiringOf, spotNamesOf } from './watcher-ledger';

/** Pages per (deployment, cloud, region): at 10,000 VMs a page holds ~625 names (~100 KB). */
export const LEDGER_PAGES = 16;

/** Input of `ledgerPageWorkflow`. */
export interface LedgerPageInput {
  deployment: string;
  cloud: string;
  region: string;
  page: number;
  /** Set only by continue-as-new. */
  entries?: LedgerEntry[];
}

/** `gpuprov-ledger:<deployment>:<cloud>:<region>:<page>`. */
export const ledgerPageId = (deployment: string, cloud: string, region: string, page: number): string =>
  `gpuprov-ledger:${deployment}:${cloud}:${region}:${page}`;

/** The page of a VM name: FNV-1a of its UTF-16 code units, modulo {@link LEDGER_PAGES}. */
export function pageOf(vmName: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < vmName.length; i++) {
    h ^= vmName.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % LEDGER_PAGES;
}

/** `items` grouped by the page of their name, pages ascending. */
export function byPage<T>(items: readonly T[], nameOf: (x: T) => string): [number, T[]][] {
  const out = new Map<number, T[]>();
  for (const x of items) {
    const p = pageOf(nameOf(x));
    const list = out.get(p);
    if (list) list.push(x);
    else out.set(p, [x]);
  }
  return [...out.entries()].sort((a, b) => a[0] - b[0]);
}

/** The ledger with `given` entries merged in: per name the later times, the create keys joined (latest kept), spot as the later record says. */
export function mergeLedger(ledger: readonly LedgerEntry[], given: readonly LedgerEntry[]): LedgerEntry[] {
  const out = new Map(ledger.map((e) => [e.vmName, e]));
  for (const g of given) {
    const e = out.get(g.vmName);
    if (!e) {
      out.set(g.vmName, g);
      continue;
    }
    const later = g.recordedAtMs > e.recordedAtMs ? g : e;
    const keys = [...new Set([...(e.createKeys ?? []), ...(g.createKeys ?? [])])].slice(-KEYS_KEPT);
    out.set(g.vmName, {
      vmName: g.vmName,
      recordedAtMs: later.recordedAtMs,
      seenAtMs: Math.max(e.seenAtMs, g.seenAtMs),
      ...(keys.length > 0 ? { createKeys: keys } : {}),
      ...(later.spot ? { spot: true as const } : {}),
    });
  }
  return [...out.values()];
}

/** What a page answers a look: its size, the names recorded as spot creates, and those to ask about (`expiringOf`). */
export interface LedgerSummary {
  size: number;
  spot: string[];
  expiring: string[];
}

export function summaryOf(ledger: readonly LedgerEntry[], nowMs: number, keepMs: number): LedgerSummary {
  return { size: ledger.length, spot: spotNamesOf(ledger), expiring: expiringOf(ledger, nowMs, { ledgerKeepMs: keepMs }) };
}

/** A recorded name's evidence for the sweep: the name, and its create keys when the creates carried them. */
export interface NameEvidence {
  vmName: string;
  createKeys?: string[];
}

/** Of `names`, those the page recorded, with their keys. */
export function evidenceOf(ledger: readonly LedgerEntry[], names: readonly string[]): NameEvidence[] {
  const asked = new Set(names);
  return ledger.filter((e) => asked.has(e.vmName)).map((e) => ({ vmName: e.vmName, ...(e.createKeys?.length ? { createKeys: e.createKeys } : {}) }));
}

/** What a look tells a page: of the names it asked about, those present; plus recorded names it listed unowned (`present` too). */
export interface LedgerSeen {
  present: string[];
  asked: string[];
  keepMs: number;
}
