/**
 * The account watchers seen from the client: this deployment's running watchers (by workflow ID
 * prefix), their orphans, and the `sweepNow` update. Used by `provision sweep` and `list --all`.
 */
import type { Client } from '@temporalio/client';
import { sweepNowUpdate, watcherStateQuery, type SweepRecord, type WatcherState } from '../core/api';
import { watcherWorkflowId } from '../core/watcher';

/** The deployment id: GPUPROV_DEPLOYMENT, else the namespace. */
export function deploymentOf(env: NodeJS.ProcessEnv, namespace: string): string {
  return env.GPUPROV_DEPLOYMENT || namespace;
}

/** Workflow IDs of the running watchers of `deployment`. */
export async function watcherIds(client: Client, deployment: string): Promise<string[]> {
  const prefix = watcherWorkflowId(deployment, '', '').replace(/::$/, ':');
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = 'accountWatcherWorkflow' AND ExecutionStatus = 'Running'` })) {
    if (wf.workflowId.startsWith(prefix)) ids.push(wf.workflowId);
  }
  return ids.sort();
}

/** Every running watcher's state (orphans, recent sweeps). */
export async function watcherStates(client: Client, deployment: string): Promise<WatcherState[]> {
  const ids = await watcherIds(client, deployment);
  return Promise.all(ids.map((id) => client.workflow.getHandle(id).query(watcherStateQuery)));
}

/** Ask every watcher to delete its orphans now (ignoring the grace); what each deleted or failed to. */
export async function sweepNow(client: Client, deployment: string): Promise<{ watcher: string; swept: SweepRecord[] }[]> {
  const ids = await watcherIds(client, deployment);
  return Promise.all(ids.map(async (id) => ({ watcher: id, swept: await client.workflow.getHandle(id).executeUpdate(sweepNowUpdate) })));
}
