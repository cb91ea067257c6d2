/**
 * Version B of the rolling-upgrade test (upgrade.test.ts): gpuprov's workflows, with vmWorkflow
 * issuing one extra command (a timer) before its first real one. A launch begun on version A that
 * moved to this code would fail to replay (a determinism error); PINNED, it never does.
 */
import { sleep } from '@temporalio/workflow';
import type { VmStatus } from '../../src/core/api';
import { vmWorkflow as currentVmWorkflow, type VmWorkflowInput } from '../../src/workflows/vm';
import { declareVersioningOf } from '../../src/workflows/versioning';

export * from '../../src/workflows';

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  await sleep(1);
  return currentVmWorkflow(input);
}
declareVersioningOf('vmWorkflow', vmWorkflow);
