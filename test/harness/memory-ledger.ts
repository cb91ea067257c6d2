/** The ledger pages in memory (src/activities/ledger-pages.ts's contract over the pure page functions), for activity tests on a fake clock. */
import type { LedgerPages } from '../../src/activities/ledger-pages';
import { evidenceOf, mergeLedger, summaryOf } from '../../src/core/ledger-pages';
import { keepLedger, recordCreates, type LedgerEntry } from '../../src/core/watcher-ledger';

export interface MemoryLedger extends LedgerPages {
  entries: () => LedgerEntry[];
  record: (vmNames: string[], keys?: { vmName: string; createKey: string }[]) => void;
  /** Signals the pages got (`seen` and `merge` calls). */
  signals: number;
  /** Summary reads. */
  summaries: number;
}

/** One region's pages as one list (paging changes where entries live, not what they say). */
export function memoryLedger(now: () => number): MemoryLedger {
  let ledger: LedgerEntry[] = [];
  const m: MemoryLedger = {
    signals: 0,
    summaries: 0,
    entries: () => ledger,
    record: (names, keys) => void (ledger = recordCreates(ledger, names, now(), keys)),
    summary: async (_at, keepMs) => {
      m.summaries += 1;
      return summaryOf(ledger, now(), keepMs);
    },
    evidence: async (_at, names) => evidenceOf(ledger, names),
    seen: async (_at, s) => {
      m.signals += 1;
      ledger = keepLedger(ledger, new Set(s.present), new Set(s.asked), now(), { ledgerKeepMs: s.keepMs });
    },
    merge: async (_at, _q, given) => {
      m.signals += 1;
      ledger = mergeLedger(ledger, given);
    },
  };
  return m;
}
