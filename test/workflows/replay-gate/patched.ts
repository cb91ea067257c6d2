/**
 * TEST-ONLY workflows for the replay gate: the change of ./altered.ts guarded by a patch, as
 * docs/ARCHITECTURE.md ("Patches") asks. Histories recorded before it take the old branch, so
 * open VMs replay. (Product code asks through `patchedSince` with an id of src/core/patches.ts;
 * this module calls `patched` itself so that the table stays free of a test-only id.)
 */
import { patched, sleep } from '@temporalio/workflow';
import type { VmStatus } from '../../../src/core/api';
import { vmWorkflow as currentVmWorkflow, type VmWorkflowInput } from '../../../src/workflows/vm';

export * from '../../../src/workflows';

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  if (patched('gpuprov-replay-gate-test-v1')) await sleep(1);
  return currentVmWorkflow(input);
}
