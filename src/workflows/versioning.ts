/**
 * Declares each workflow type's versioning behaviour (PINNED or AUTO_UPGRADE, the table and its
 * reasons in src/core/versioning.ts) on the workflow function, where the SDK reads it.
 *
 * Hazard: a worker without a Worker Deployment Version must not send a behaviour (the server
 * fails every workflow task that does: "versioning behavior cannot be specified without
 * deployment options"), and workflow code cannot see the worker's options. So the behaviour is a
 * getter, evaluated at a run's first activation, that declares it only when that task ran on a
 * versioned worker (`currentDeploymentVersion` has a deployment name). A run begun on an
 * unversioned worker and later taken by a versioned one gets the worker's default (PINNED) until
 * its next continue-as-new.
 */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { declaredBehavior, type WorkflowTypeName } from '../core/versioning';

type WorkflowFn = (...args: never[]) => Promise<unknown>;

/** True when the current workflow task runs on a worker with a Worker Deployment Version. */
function versionedWorker(): boolean {
  return Boolean(workflowInfo().currentDeploymentVersion?.deploymentName);
}

/** Declares `name`'s behaviour on `fn` (a test's altered workflow of the same type, too). */
export function declareVersioningOf(name: WorkflowTypeName, fn: WorkflowFn): void {
  setWorkflowOptions(() => {
    const versioningBehavior = declaredBehavior(name, versionedWorker());
    return versioningBehavior ? { versioningBehavior } : {};
  }, fn);
}

/** Declares the behaviour of every registered workflow; the record must name each type of the table. */
export function declareVersioning(workflows: Record<WorkflowTypeName, WorkflowFn>): void {
  for (const [name, fn] of Object.entries(workflows) as [WorkflowTypeName, WorkflowFn][]) declareVersioningOf(name, fn);
}

/**
 * Continue-as-new options of a PINNED workflow: on a versioned worker, the next run starts on the
 * deployment's current version (a Ready VM moves to new code at this safe point); unversioned,
 * the options as given (the same hazard as above).
 */
export function onCurrentVersion<T extends object>(options: T | undefined): T | (T & { initialVersioningBehavior: 'AUTO_UPGRADE' }) | undefined {
  return versionedWorker() ? { ...(options as T), initialVersioningBehavior: 'AUTO_UPGRADE' } : options;
}
