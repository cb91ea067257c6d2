/**
 * TEST-ONLY workflows for the replay gate: gpuprov's workflows, except that `vmWorkflow` starts a
 * timer before its first real command (a deliberately incompatible change: an open VM's history
 * cannot replay against it).
 */
import { sleep } from '@temporalio/workflow';
import type { VmStatus } from '../../../src/core/api';
import { vmWorkflow as currentVmWorkflow, type VmWorkflowInput } from '../../../src/workflows/vm';

export * from '../../../src/workflows';

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  await sleep(1);
  return currentVmWorkflow(input);
}
