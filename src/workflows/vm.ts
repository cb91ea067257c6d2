/**
 * vmWorkflow (ID `vm-<name>`): the VM entity. Launch (failover search) → Ready (waits for
 * teardown, cancel, TTL, the account watcher's `instanceLost`, or the rare backstop health check) →
 * teardown. Lives as long as the VM, using continue-as-new to keep its history bounded; with
 * `--recover` a lost VM continues as new without `carried`, i.e. launches again (./recovery.ts).
 * State and steps live in `VmEntity` (vm-entity.ts), the end in vm-end.ts; this is the glue.
 */
import { CancellationScope, allHandlersFinished, condition, makeContinueAsNewFunc, setHandler } from '@temporalio/workflow';
import { cancelSignal, instanceLostSignal, retryK8sSignal, statusQuery, teardownSignal, type VmStatus } from '../core/api';
import { afterLoss, recoveryMemo } from './recovery';
import { finish, tearDown } from './vm-end';
import { VmEntity, type ReadyEnd, type VmWorkflowInput } from './vm-entity';

export type { VmCarried, VmWorkflowInput } from './vm-entity';

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  const vm = new VmEntity(input);
  setHandler(statusQuery, () => vm.status);
  setHandler(teardownSignal, () => vm.onTeardown());
  setHandler(cancelSignal, () => vm.requestCancel());
  setHandler(retryK8sSignal, () => vm.onRetryK8s());
  setHandler(instanceLostSignal, (l) => vm.onInstanceLost(l));
  CancellationScope.current().cancelRequested.catch(() => vm.requestCancel(true));

  const end = await CancellationScope.nonCancellable(async (): Promise<ReadyEnd | 'launch-cancelled'> => {
    if (!input.carried && (await vm.launch()) === 'launch-cancelled') return 'launch-cancelled';
    return vm.stayReady();
  });

  const endedAtMs = Date.now();
  const again = { spec: input.spec, ...(input.tuning ? { tuning: input.tuning } : {}) };
  if (end === 'continue') {
    await condition(allHandlersFinished);
    return makeContinueAsNewFunc<typeof vmWorkflow>(recoveryMemo(vm.status.recovered))({ ...again, carried: vm.carried() });
  }
  if (end !== 'launch-cancelled') await tearDown(vm, end === 'lost');
  if (end === 'lost' && input.spec.recover) {
    await condition(allHandlersFinished);
    const recovered = afterLoss(vm, vm.lossCause, vm.stopAskedSinceReady(), endedAtMs);
    if (recovered) return makeContinueAsNewFunc<typeof vmWorkflow>(recoveryMemo(recovered))({ ...again, recovered });
  }
  return finish(vm, end === 'lost');
}
