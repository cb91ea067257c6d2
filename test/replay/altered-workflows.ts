/**
 * A TEST-ONLY workflows module for the negative replay test: `vmWorkflow` and `fleetWorkflow`
 * with one extra command (a timer) before their first real one. Bundled by replay.test.ts through
 * `workflowsPath`; a saved history of either must fail to replay against it with a
 * DeterminismViolationError.
 */
import { sleep } from '@temporalio/workflow';
import type { VmStatus } from '../../src/core/api';
import type { FleetStatus, FleetWorkflowInput } from '../../src/core/fleet-api';
import { fleetWorkflow as currentFleetWorkflow } from '../../src/workflows/fleet';
import { vmWorkflow as currentVmWorkflow, type VmWorkflowInput } from '../../src/workflows/vm';

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  await sleep(1);
  return currentVmWorkflow(input);
}

export async function fleetWorkflow(input: FleetWorkflowInput): Promise<FleetStatus> {
  await sleep(1);
  return currentFleetWorkflow(input);
}
