/**
 * Declares each workflow type's versioning behaviour (PINNED or AUTO_UPGRADE, the table and its
 * reasons in src/core/versioning.ts) on the workflow function, where the SDK reads it. A worker
 * without Worker Versioning ignores it.
 */
import { setWorkflowOptions } from '@temporalio/workflow';
import { WORKFLOW_VERSIONING, type WorkflowTypeName } from '../core/versioning';

/** Sets `versioningBehavior` on every registered workflow; the record must name each type of the table. */
export function declareVersioning(workflows: Record<WorkflowTypeName, (...args: never[]) => Promise<unknown>>): void {
  for (const [name, fn] of Object.entries(workflows) as [WorkflowTypeName, (...args: never[]) => Promise<unknown>][]) {
    setWorkflowOptions({ versioningBehavior: WORKFLOW_VERSIONING[name] }, fn);
  }
}

/**
 * Continue-as-new options of a PINNED workflow: the next run starts on the deployment's current
 * version (a Ready VM moves to new code at this safe point). Unversioned workers ignore it.
 */
export function onCurrentVersion<T extends object>(options: T | undefined): T & { initialVersioningBehavior: 'AUTO_UPGRADE' } {
  return { ...(options as T), initialVersioningBehavior: 'AUTO_UPGRADE' };
}
