/**
 * The activities' side of the capacity memory (src/workflows/capacity-memory.ts): signal-with-start
 * it when an attempt answered Capacity, and read it for the plan. Both use the worker's own client
 * (the activity context's) on the main task queue, so every worker of the deployment shares one memory.
 */
import { asyncLocalStorage, Context } from '@temporalio/activity';
import { WorkflowClient } from '@temporalio/client';
import { capacityMemoryQuery, rememberCapacitySignal } from '../core/api';
import {
  capacityEntryOf,
  capacityKey,
  capacityMemoryWorkflowId,
  parseCapacityMemory,
  type CapacityEntry,
  type CapacityMemoryWorkflow,
  type CapacityOffer,
} from '../core/capacity-memory';
import { activityLog } from './activity-log';

export interface CapacityMemoryDeps {
  /** How long a Capacity answer is remembered (ms; 0: off). Default: `GPUPROV_CAPACITY_MEMORY` or 3 minutes. */
  capacityMemoryMs?: number;
  now?: () => number;
}

/** The entries the plan orders by; empty outside an activity, with the memory off, or when it cannot be read. */
export async function readCapacityMemory(deps: CapacityMemoryDeps): Promise<CapacityEntry[]> {
  if (windowOf(deps) <= 0 || !asyncLocalStorage.getStore()) return [];
  try {
    const ctx = Context.current();
    // A closed memory answers nothing: terminating it is how an operator (or the bench) empties it.
    // The worker's data converter: with the payload codec on, the memory's answer is encrypted.
    const workflows = new WorkflowClient({
      connection: ctx.client.connection,
      namespace: ctx.info.workflowNamespace,
      dataConverter: ctx.client.options.dataConverter,
      queryRejectCondition: 'NOT_OPEN',
    });
    return await workflows.getHandle(capacityMemoryWorkflowId(ctx.info.taskQueue)).query(capacityMemoryQuery);
  } catch (err) {
    // Never started (or gone): nothing is remembered. Anything else: plan without it.
    activityLog('debug', 'capacity memory not read', { error: err instanceof Error ? err.message : String(err) });
    return [];
  }
}

function windowOf(deps: CapacityMemoryDeps): number {
  return deps.capacityMemoryMs ?? parseCapacityMemory(process.env['GPUPROV_CAPACITY_MEMORY']);
}

/**
 * Remember that `offer` answered Capacity, for the deployment's window, in the memory of the main
 * task queue `taskQueue` (signal-with-start: starts the memory workflow if needed). Throws what the
 * server answers; in an activity only.
 */
async function remember(deps: CapacityMemoryDeps, taskQueue: string, offer: CapacityOffer): Promise<void> {
  const windowMs = windowOf(deps);
  if (windowMs <= 0) return;
  const ctx = Context.current();
  const seenAtMs = (deps.now ?? Date.now)();
  const entry = capacityEntryOf(offer, seenAtMs, windowMs);
  await ctx.client.workflow.signalWithStart<CapacityMemoryWorkflow, [CapacityEntry]>('capacityMemoryWorkflow', {
    workflowId: capacityMemoryWorkflowId(taskQueue),
    taskQueue,
    args: [{ entries: [] }],
    signal: rememberCapacitySignal,
    signalArgs: [entry],
    staticSummary: 'capacity memory: offers that answered Capacity recently (tried last by later plans)',
  });
  activityLog('info', 'offer remembered as out of capacity', { offer: capacityKey(offer), windowMs });
}

/** {@link remember} for an activity on another queue (the release of the attempt): never throws, a failure is logged. */
export function capacityNoter(deps: CapacityMemoryDeps): (taskQueue: string, offer: CapacityOffer) => Promise<void> {
  return (taskQueue, offer) =>
    remember(deps, taskQueue, offer).catch((err: unknown) =>
      activityLog('warn', 'capacity memory not told', { error: err instanceof Error ? err.message : String(err) }),
    );
}
