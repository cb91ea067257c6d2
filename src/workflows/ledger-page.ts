/**
 * ledgerPageWorkflow (ID `gpuprov-ledger:<deployment>:<cloud>:<region>:<page>`): one page of the
 * ledger of creates (src/core/ledger-pages.ts). Creates and Ready VMs record their names here by
 * signal-with-start; the account watcher's look asks it by query and tells it what it saw. It
 * ends once it holds nothing (the next record starts it again) and continues as new when its
 * history grows, carrying its entries.
 */
import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { ledgerEvidenceQuery, ledgerMergeSignal, ledgerSeenSignal, ledgerSummaryQuery } from '../core/ledger-api';
import { evidenceOf, mergeLedger, summaryOf, type LedgerPageInput } from '../core/ledger-pages';
import { watcherRecordSignal } from '../core/watcher-api';
import { keepLedger, recordCreates, type LedgerEntry } from '../core/watcher-ledger';

/** Signals taken before continuing as new (each is one event). */
const SIGNALS_PER_RUN = 1_000;

export async function ledgerPageWorkflow(input: LedgerPageInput): Promise<void> {
  let ledger: LedgerEntry[] = input.entries ?? [];
  let signals = 0;
  setHandler(watcherRecordSignal, (rec) => {
    ledger = recordCreates(ledger, rec.vmNames, Date.now(), rec.createKeys, rec.spotNames);
    signals++;
  });
  setHandler(ledgerMergeSignal, (entries) => {
    ledger = mergeLedger(ledger, entries);
    signals++;
  });
  setHandler(ledgerSeenSignal, (seen) => {
    ledger = keepLedger(ledger, new Set(seen.present), new Set(seen.asked), Date.now(), { ledgerKeepMs: seen.keepMs });
    signals++;
  });
  setHandler(ledgerSummaryQuery, (keepMs) => summaryOf(ledger, Date.now(), keepMs));
  setHandler(ledgerEvidenceQuery, (names) => evidenceOf(ledger, names));
  await condition(() => ledger.length === 0 || signals >= SIGNALS_PER_RUN || workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  if (ledger.length === 0) return;
  await continueAsNew<typeof ledgerPageWorkflow>({ ...input, entries: ledger });
}
