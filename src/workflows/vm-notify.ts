/**
 * Whom a VM tells about itself: the fleet that started it (a slot reports `ready` and its end),
 * and the account watcher of its cloud and region (started if need be once it is Ready).
 */
import { getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { slotEventSignal } from '../core/fleet-api';
import type { VmContext } from './context';
import { watching } from './proxies';

/** Make sure the account watcher of this VM's cloud and region runs; a failure only costs the fast loss detection. */
export async function ensureWatcher(ctx: VmContext): Promise<void> {
  const at = ctx.status.location;
  if (!at) return;
  try {
    await watching(`account watcher of ${at.cloud}/${at.region}`).ensureWatcher({
      at: { cloud: at.cloud, region: at.region },
      taskQueue: workflowInfo().taskQueue,
      vmName: ctx.status.name,
    });
  } catch {
    // The backstop health check still notices a lost VM.
  }
}

/**
 * Signal the parent fleet (by workflow ID, so it reaches its current run) with this attempt's
 * stage. Only when there is a parent: standalone VMs (and every saved history) issue no extra command.
 */
export async function notifyParent(ctx: VmContext): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  const s = ctx.status;
  try {
    await getExternalWorkflowHandle(parent.workflowId).signal(slotEventSignal, {
      workflowId: workflowInfo().workflowId,
      stage: s.stage,
      ...(s.endpoint ? { endpoint: s.endpoint } : {}),
      ...(s.hostKey ? { hostKey: s.hostKey } : {}),
      ...(s.workerKeyFingerprint ? { workerKeyFingerprint: s.workerKeyFingerprint } : {}),
      ...(s.error ? { error: s.error } : {}),
      ...(s.budget?.reachedAt && s.stage === 'terminated' ? { budgetReached: true } : {}),
    });
  } catch {
    // The fleet has ended: nobody is left to tell.
  }
}
