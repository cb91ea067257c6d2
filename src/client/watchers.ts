/**
 * The account watchers seen from the client: this deployment's running watchers (by workflow ID
 * prefix), their orphans, and the `sweepNow` update. Used by `provision sweep` and `list --all`.
 */
import type { Client } from '@temporalio/client';
import { TERMINAL_STAGES } from '../core/api';
import { sweepNowUpdate, watcherStateQuery, type SweepRecord, type WatcherState } from '../core/watcher-api';
import { watcherWorkflowId } from '../core/watcher';
import type { VmListing } from './client';

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

/**
 * Ask every watcher to delete its orphans now (ignoring the grace), and the unknown VM names the
 * operator named (`includeUnknown`); what each deleted or failed to.
 */
export async function sweepNow(client: Client, deployment: string, includeUnknown: string[] = []): Promise<{ watcher: string; swept: SweepRecord[] }[]> {
  const ids = await watcherIds(client, deployment);
  return Promise.all(
    ids.map(async (id) => ({ watcher: id, swept: await client.workflow.getHandle(id).executeUpdate(sweepNowUpdate, { args: [{ includeUnknown }] }) })),
  );
}

/** Executions that ended without the workflow's own teardown. */
const CUT_SHORT = new Set(['TERMINATED', 'TIMED_OUT']);

/**
 * `list --all`: the orphans as rows (stage `orphan`), and on each VM whose workflow was cut short
 * before its VM ended, what became of its instance (see {@link VmListing.instance}). Pure.
 */
export function withOrphans(rows: VmListing[], watchers: WatcherState[]): VmListing[] {
  const out = rows.map((r) => {
    if (!CUT_SHORT.has(r.execution) || (TERMINAL_STAGES as readonly string[]).includes(r.stage)) return r;
    const here = watchers.filter((w) => (!r.cloud || w.cloud === r.cloud) && (!r.region || w.region === r.region));
    if (here.some((w) => w.orphans.some((o) => o.vmName === r.name))) return { ...r, instance: { state: 'orphan' as const } };
    const swept = here.flatMap((w) => w.sweeps).filter((s) => s.vmName === r.name && s.ok && s.sweptAt >= r.startedAt);
    const last = swept
      .map((s) => s.sweptAt)
      .sort()
      .at(-1);
    return { ...r, instance: last ? { state: 'swept' as const, sweptAt: last } : { state: 'not seen' as const } };
  });
  for (const w of watchers) {
    for (const o of w.orphans)
      out.push({ name: o.vmName, workflowId: '-', stage: 'orphan', cloud: w.cloud, region: w.region, execution: 'NONE', startedAt: o.firstSeenAt });
    for (const o of w.unknown ?? [])
      out.push({ name: o.vmName, workflowId: '-', stage: 'unknown', cloud: w.cloud, region: w.region, execution: 'NONE', startedAt: o.firstSeenAt });
  }
  return out;
}
