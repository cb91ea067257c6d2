/**
 * vmWorkflow (ID `vm-<name>`): the VM entity. Launch (failover search) → Ready (waits for
 * teardown, cancel, TTL, the account watcher's `instanceLost`, or the rare backstop health check) →
 * teardown. Lives as long as the VM, using continue-as-new to keep its history bounded; with
 * `--recover` a lost VM continues as new without `carried`, i.e. launches again (./recovery.ts);
 * a preempted one with its deadline ahead does so before its teardown, the old instance retiring
 * beside the replacement's launch (./retire.ts).
 * State and steps live in `VmEntity` (vm-entity.ts), the end in vm-end.ts; this is the glue.
 */
import { CancellationScope, allHandlersFinished, condition, makeContinueAsNewFunc, setHandler } from '@temporalio/workflow';
import { cancelSignal, instanceLostSignal, retryK8sSignal, statusQuery, teardownSignal, type VmStatus } from '../core/api';
import { afterLoss, recoveryMemo, replacementAfterLoss } from './recovery';
import { rememberPreempted, retireBeside } from './retire';
import { countPreemption } from './telemetry';
import { finish, lostStage, tearDown } from './vm-end';
import { VmEntity, type ReadyEnd, type VmWorkflowInput } from './vm-entity';
import { onCurrentVersion } from './versioning';

export type { VmCarried, VmWorkflowInput } from './vm-entity';

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  const vm = new VmEntity(input);
  setHandler(statusQuery, () => vm.status);
  setHandler(teardownSignal, () => vm.onTeardown());
  setHandler(cancelSignal, () => vm.requestCancel());
  setHandler(retryK8sSignal, () => vm.onRetryK8s());
  setHandler(instanceLostSignal, (l) => vm.onInstanceLost(l));
  CancellationScope.current().cancelRequested.catch(() => vm.requestCancel(true));

  const retiring = !input.carried && vm.status.retiring ? retireBeside(vm, vm.status.retiring, vm.pollIntervalMs) : undefined;
  const end = await CancellationScope.nonCancellable(async (): Promise<ReadyEnd | 'launch-cancelled'> => {
    if (!input.carried) {
      let launched: Awaited<ReturnType<VmEntity['launch']>>;
      try {
        launched = await vm.launch();
      } finally {
        await retiring?.settle();
      }
      if (launched === 'launch-cancelled') return 'launch-cancelled';
    }
    return vm.stayReady();
  });

  const endedAtMs = Date.now();
  const again = { spec: input.spec, ...(input.tuning ? { tuning: input.tuning } : {}) };
  if (end === 'continue') {
    await condition(allHandlersFinished);
    return makeContinueAsNewFunc<typeof vmWorkflow>(onCurrentVersion(recoveryMemo(vm.status.recovered)))({ ...again, carried: vm.carried() });
  }
  const replace = end === 'lost' ? replacementAfterLoss(vm, vm.lossCause, vm.stopAskedSinceReady(), endedAtMs) : undefined;
  if (replace) {
    lostStage(vm);
    await rememberPreempted(vm, replace.retiring);
    await condition(allHandlersFinished);
    return makeContinueAsNewFunc<typeof vmWorkflow>(onCurrentVersion(recoveryMemo(replace.recovered)))({
      ...again,
      recovered: replace.recovered,
      retiring: replace.retiring,
    });
  }
  if (end !== 'launch-cancelled') await tearDown(vm, end === 'lost');
  if (end === 'lost' && input.spec.recover) {
    await condition(allHandlersFinished);
    const recovered = afterLoss(vm, vm.lossCause, vm.stopAskedSinceReady(), endedAtMs);
    if (recovered) return makeContinueAsNewFunc<typeof vmWorkflow>(onCurrentVersion(recoveryMemo(recovered)))({ ...again, recovered });
  } else if (end === 'lost' && vm.lossCause.kind === 'preempted') countPreemption(vm.status, vm.lossCause.deadline !== undefined, 'stay');
  return finish(vm, end === 'lost');
}
