/**
 * A `--recover` replacement's old instance (src/core/recovery.ts, row `replace`): it runs beside
 * the replacement launch of the same run and is deleted when the replacement is Ready, when the
 * launch ends otherwise, or at the cloud's deadline, whichever comes first (a durable timer). Its
 * deletion is exact (its own ids only), so the replacement (same name, maybe the same place, on a
 * cloud that keeps no create key) is spared.
 */
import { CancellationScope, condition, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { rememberCapacitySignal, type RetiringInstance } from '../core/api';
import { capacityEntryOf, capacityMemoryWorkflowId } from '../core/capacity-memory';
import type { VmContext } from './context';
import { runTeardown } from './teardown';
import { vmLog } from './telemetry';

export interface Retirement {
  /** The launch is over (Ready, failed or cancelled): delete now if not yet, and wait until it is gone. */
  settle(): Promise<void>;
}

/** Start retiring `r` beside this run's launch; `pollIntervalMs`: the cloud's. */
export function retireBeside(ctx: VmContext, r: RetiringInstance, pollIntervalMs: number): Retirement {
  let settled = false;
  // Hazard: never cancellable, or a Temporal cancel of the workflow would cancel the timer and leave the old instance billed.
  const done = CancellationScope.nonCancellable(async () => {
    const leftMs = Date.parse(r.deadline) - Date.now();
    const early = await condition(() => settled || ctx.status.readyAt !== undefined, Math.max(1, leftMs));
    vmLog(ctx.status, 'info', early ? 'replacement launch over: deleting the preempted instance' : 'preemption deadline: deleting the preempted instance', {
      instanceIds: r.instanceIds,
    });
    await runTeardown(ctx, {
      at: r.location,
      vmName: ctx.status.name,
      instanceIds: r.instanceIds,
      mode: 'full',
      pollIntervalMs,
      idempotencyKeys: [r.createdBy],
      // Exact: on a cloud that keeps no create key the replacement (same name) would match too.
      exact: true,
    });
    ctx.status.retiring = { ...r, goneAt: new Date().toISOString() };
  });
  return {
    settle: async () => {
      settled = true;
      await done;
    },
  };
}

/** Tell the deployment's capacity memory that `r`'s offer was preempted: its next plans try it last. Nobody to tell: nothing. */
export async function rememberPreempted(ctx: VmContext, r: RetiringInstance): Promise<void> {
  try {
    await getExternalWorkflowHandle(capacityMemoryWorkflowId(workflowInfo().taskQueue)).signal(
      rememberCapacitySignal,
      capacityEntryOf(r.offer, Date.now(), ctx.tuning.preemptedMemoryMs),
    );
  } catch {
    // No capacity memory runs yet (none of this deployment's attempts answered Capacity): the plan has nothing to demote.
  }
}
