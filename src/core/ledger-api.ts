/**
 * The ledger pages' messages (`ledgerPageWorkflow`, src/core/ledger-pages.ts). A page takes the
 * same `watcherRecord` signal a watcher takes (src/core/watcher-api.ts); these are its own. Both
 * the activities and the workflows import this module; it holds no logic.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { LedgerEntry } from './watcher-ledger';
import type { LedgerSeen, LedgerSummary, NameEvidence } from './ledger-pages';

/** A watcher hands over the entries it carried from before the pages (merged, never replacing). */
export const ledgerMergeSignal = defineSignal<[LedgerEntry[]]>('ledgerMerge');

/** A look's answer to the names it asked about: refresh the present, forget the long gone. */
export const ledgerSeenSignal = defineSignal<[LedgerSeen]>('ledgerSeen');

/** The page's size, spot names and the names due to be asked about, given the keep time (ms). */
export const ledgerSummaryQuery = defineQuery<LedgerSummary, [number]>('ledgerSummary');

/** Of these names, those the page recorded, with their create keys. */
export const ledgerEvidenceQuery = defineQuery<NameEvidence[], [string[]]>('ledgerEvidence');
