/**
 * How a vmWorkflow run ends once Ready is over (or the launch was cancelled): delete what the VM
 * holds, then its final stage. Continue-as-new (a long history, a `--recover` relaunch) is the
 * caller's: it needs the workflow's own type.
 */
import { CancelledFailure } from '@temporalio/workflow';
import type { VmStatus } from '../core/api';
import { lossMessage } from '../core/loss';
import { runTeardown } from './teardown';
import { recordGone } from './telemetry';
import type { VmEntity } from './vm-entity';
import { notifyParent } from './vm-notify';

/** Stage `lost`, saying why (`lossCause`, and the watcher's words as the error). */
export function lostStage(vm: VmEntity): void {
  vm.setStage('lost', { ...(vm.watcherLoss ? { error: { kind: 'InstanceLost', message: lossMessage(vm.watcherLoss) } } : {}), lossCause: vm.lossCause });
}

/** Stage `lost` (saying why) or `tearing-down`, then delete everything the VM holds. */
export async function tearDown(vm: VmEntity, lost: boolean): Promise<void> {
  const s = vm.status;
  if (lost) lostStage(vm);
  else vm.setStage('tearing-down');
  if (!s.location) return;
  const sinceMs = Date.now();
  await runTeardown(vm, {
    at: s.location,
    vmName: s.name,
    instanceIds: s.instanceIds,
    mode: 'full',
    pollIntervalMs: vm.pollIntervalMs,
    ...(s.createdBy ? { idempotencyKeys: [s.createdBy] } : {}),
  });
  recordGone(s, s.location.cloud, sinceMs);
}

/** The final stage (`lost`, `cancelled` or `terminated`), told to the fleet; Temporal's own cancellation ends the run Cancelled. */
export async function finish(vm: VmEntity, lost: boolean): Promise<VmStatus> {
  const final = lost ? 'lost' : vm.cancelRequested ? 'cancelled' : 'terminated';
  vm.setStage(final, { endedAt: new Date().toISOString(), instanceIds: [] });
  await notifyParent(vm);
  if (vm.temporalCancelled) throw new CancelledFailure('cancelled; everything this VM created was deleted');
  return vm.status;
}
