/**
 * fleetWorkflow (ID `fleet-<name>`): the driver of a fleet. It holds the desired shape (changed
 * by the `applyShape` Update), folds observations (child results, `slotEvent` signals, bootstrap
 * activities) into the observed state, and runs the pure reconcile (`src/core/fleet/reconcile.ts`) on
 * every change and stored deadline. Each slot attempt is a child vmWorkflow with an
 * attempt-scoped ID; its bootstrap runs here as activities once the child reports `ready`.
 * A slot is destroyed, and the fleet ends, only once its child has closed: children are torn down
 * through their own teardown (also on `teardown` and on cancellation), never abandoned.
 * State and decisions live in `FleetDriver` (fleet-driver.ts); this is the glue.
 */
import { ApplicationFailure, CancellationScope, allHandlersFinished, condition, continueAsNew, setHandler } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../core/failures';
import { shapeProblems } from '../core/fleet/types';
import { applyShapeUpdate, fleetStatusQuery, fleetTeardownSignal, slotEventSignal, type FleetStatus, type FleetWorkflowInput } from '../core/fleet-api';
import { FleetDriver } from './fleet-driver';

export async function fleetWorkflow(input: FleetWorkflowInput): Promise<FleetStatus> {
  const problems = shapeProblems(input.carried?.desired ?? input.shape);
  if (problems.length)
    throw ApplicationFailure.create({ type: FAILURE_TYPES.InvalidRequest, message: `invalid fleet shape: ${problems.join('; ')}`, nonRetryable: true });

  const fleet = new FleetDriver(input);
  setHandler(fleetStatusQuery, () => fleet.status());
  setHandler(fleetTeardownSignal, () => fleet.requestDown());
  setHandler(slotEventSignal, (e) => fleet.onSlotEvent(e));
  setHandler(applyShapeUpdate, (shape) => fleet.applyShape(shape), { validator: (shape) => fleet.validateShape(shape) });
  // Temporal cancellation of the fleet = teardown (every slot is deleted first).
  CancellationScope.current().cancelRequested.catch(() => fleet.requestDown());

  const result = await CancellationScope.nonCancellable(async () => {
    for (;;) {
      const wakeAt = fleet.reconcile();
      if (fleet.finished()) return 'done' as const;
      if (fleet.shouldContinueAsNew()) return 'continue' as const;
      await fleet.changed(wakeAt);
    }
  });

  await condition(allHandlersFinished);
  if (result === 'continue') {
    return continueAsNew<typeof fleetWorkflow>({ ...input, shape: fleet.desired, carried: fleet.carried() });
  }
  return fleet.status(new Map());
}
