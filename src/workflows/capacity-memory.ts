/**
 * The deployment's capacity memory as an entity workflow (one per deployment, id from
 * `capacityMemoryWorkflowId`): launches feed it (the release of an attempt that answered Capacity
 * signal-with-starts it, `ReleaseInput.capacity`), the plan step queries it. Being a workflow, it survives a
 * worker restart and is shared by every worker host. Decisions live in src/core/capacity-memory.ts.
 * It ends when nothing is remembered (the next signal starts it again) and continues as new when
 * its history grows, so neither its entries nor its history grow without bound.
 */
import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { capacityMemoryQuery, rememberCapacitySignal } from '../core/api';
import { capacityOfferOf, liveEntries, nextExpiry, remember, type CapacityMemoryInput } from '../core/capacity-memory';
import type { Offer } from '../core/provider';
import type { ReleaseInput } from '../activities/attempt';

/** Signals taken before continuing as new (each is two or three events). */
const SIGNALS_PER_RUN = 500;

export async function capacityMemoryWorkflow(input: CapacityMemoryInput): Promise<void> {
  let entries = liveEntries(input.entries, Date.now());
  let signals = 0;
  let changed = false;
  setHandler(rememberCapacitySignal, (e) => {
    entries = remember(entries, e, Date.now());
    signals++;
    changed = true;
  });
  setHandler(capacityMemoryQuery, () => liveEntries(entries, Date.now()));
  for (;;) {
    const until = nextExpiry(entries);
    const wait = until === undefined ? 1 : Math.max(1, until - Date.now());
    await condition(() => changed || signals >= SIGNALS_PER_RUN || workflowInfo().continueAsNewSuggested, wait);
    changed = false;
    entries = liveEntries(entries, Date.now());
    if (signals >= SIGNALS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof capacityMemoryWorkflow>({ entries });
    }
    if (entries.length === 0) return;
  }
}

/**
 * The launch's part: what the release of an attempt that answered Capacity tells the memory
 * (`ReleaseInput.capacity`, on this workflow's task queue).
 */
export function capacityNote(offer: Offer): NonNullable<ReleaseInput['capacity']> {
  return { offer: capacityOfferOf(offer), taskQueue: workflowInfo().taskQueue };
}
