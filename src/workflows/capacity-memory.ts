/**
 * The deployment's capacity memory as an entity workflow (one per deployment, id from
 * `capacityMemoryWorkflowId`): launches feed it (the release of an attempt that answered Capacity
 * signal-with-starts it, `ReleaseInput.capacity`), the plan step queries it. Being a workflow, it survives a
 * worker restart and is shared by every worker host. Decisions live in src/core/capacity-memory.ts.
 * It ends when nothing is remembered (the next signal starts it again) and continues as new when
 * its history grows, so neither its entries nor its history grow without bound.
 */
import { allHandlersFinished, condition, continueAsNew, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { capacityMemoryQuery, rememberCapacitySignal } from '../core/api';
import { capacityOfferOf, liveEntries, nextExpiry, remember, type CapacityMemoryInput } from '../core/capacity-memory';
import type { Offer } from '../core/provider';
import { CAPACITY_MEMORY_PATCH, CAPACITY_NOTE_PATCH, LOCAL_CALLS_PATCH } from '../core/patches';
import type { ReleaseInput } from '../activities/attempt';
import type { Tuning } from '../core/tuning';
import { localTemporalCall, reading } from './proxies';

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
 * (`ReleaseInput.capacity`, on this workflow's task queue); undefined in histories from before
 * CAPACITY_NOTE_PATCH, which told it with {@link noteCapacity}.
 */
export function capacityNote(offer: Offer): ReleaseInput['capacity'] {
  if (!patched(CAPACITY_NOTE_PATCH)) return undefined;
  return { offer: capacityOfferOf(offer), taskQueue: workflowInfo().taskQueue };
}

/**
 * The launch's part before CAPACITY_NOTE_PATCH (replays only): tell the memory that `offer`
 * answered Capacity. Best effort — a memory that cannot be reached costs later launches an
 * attempt, never this one its VM.
 */
export async function noteCapacity(t: Tuning, offer: Offer): Promise<void> {
  if (!patched(CAPACITY_MEMORY_PATCH)) return;
  const summary = `remember: ${offer.instanceType} in ${offer.region} has no capacity`;
  try {
    await (patched(LOCAL_CALLS_PATCH) ? localTemporalCall(t, summary) : reading(t, summary)).rememberCapacity({
      cloud: offer.cloud,
      region: offer.region,
      instanceType: offer.instanceType,
    });
  } catch {
    // best effort (see above)
  }
}
