/**
 * The account watcher's activities: one cycle's view (the cloud's `inventory` plus the open
 * vmWorkflows placed in that cloud and region, from visibility), and `ensureWatcher`, the
 * signal-with-start a VM runs once it is Ready. Both talk to Temporal through the worker's client.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { watcherNudgeSignal, type Stage } from '../core/api';
import type { Owned, SideResource } from '../core/provider';
import { SA } from '../core/search-attributes';
import { mainTaskQueue } from '../core/rate-limits';
import {
  cycleMustReturn,
  heartbeatEveryMs,
  planCycle,
  viewSignature,
  watcherWorkflowId,
  type OrphanSeen,
  type OwnerVm,
  type WatcherInput,
  type WatcherTuning,
  withWatcherTuning,
} from '../core/watcher';
import type { ProviderRegistry } from '../providers/registry';
import { activityLog } from './activity-log';
import { providerOf } from './attempt';
import { translated } from './failures';

export interface WatcherDeps {
  registry: ProviderRegistry;
  /** The deployment id: part of every watcher's workflow ID. */
  owner: string;
  /** Watcher timings given to watchers this worker starts (GPUPROV_ORPHAN_GRACE sets the grace). */
  watcher?: Partial<WatcherTuning>;
  /** Default: the activity context's client. */
  client?: () => Client;
  /** Clock and the cancellable sleep between looks, for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** One account and region, and the task queue whose vmWorkflows count as owners. */
export interface WatchInput {
  at: { cloud: string; region: string };
  taskQueue: string;
}

/** A cycle that keeps looking by itself (every planned interval) until the view changes or needs action. */
export interface WatchCycleInput extends WatchInput {
  /** The orphans the workflow knows (their first-seen times decide what is due). */
  known: OrphanSeen[];
  tuning: WatcherTuning;
  /** The signature of the view the workflow last acted on; absent: return after one look. */
  lastSignature?: string;
}

export interface WatchView {
  instances: Owned[];
  owners: OwnerVm[];
  /** This deployment's side resources here (absent: the adapter does not list them). */
  sides?: SideResource[];
  /** `viewSignature` of this view. */
  signature: string;
  /** Looks (inventory calls) this cycle made. */
  looks: number;
  /** Heartbeats this cycle sent (each reaches the server: they are further apart than the worker's throttle). */
  beats?: number;
}

const quoted = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The visibility query of the open vmWorkflows placed at `at` on `taskQueue`. */
export function ownersQuery(input: WatchInput): string {
  return [
    `WorkflowType = 'vmWorkflow'`,
    `ExecutionStatus = 'Running'`,
    `TaskQueue = ${quoted(input.taskQueue)}`,
    `${SA.cloud.name} = ${quoted(input.at.cloud)}`,
    `${SA.region.name} = ${quoted(input.at.region)}`,
  ].join(' AND ');
}

const NAMES_PER_QUERY = 20;

/** The visibility query of the open vmWorkflows with one of these VM names, wherever they run. */
export function openByNameQuery(vmNames: readonly string[]): string {
  const names = vmNames.map((n) => `${SA.vmName.name} = ${quoted(n)}`).join(' OR ');
  return `WorkflowType = 'vmWorkflow' AND ExecutionStatus = 'Running' AND (${names})`;
}

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // unit tests call activities directly
  }
}

/** A heartbeat: liveness, and where a cancel (a nudge, a sweep request) is delivered. */
function beat(): void {
  activityContext()?.heartbeat();
}

/** The activity's cancellable sleep; a plain timer outside an activity. */
async function pause(ms: number): Promise<void> {
  const ctx = activityContext();
  if (ctx) await ctx.sleep(ms);
  else await new Promise((r) => setTimeout(r, ms));
}

/**
 * Heartbeats at most every `everyMs` (half the heartbeat timeout): the worker throttles only to
 * `maxHeartbeatThrottleInterval` (3 s here), so a beat per look would reach the server per look.
 */
function heartbeats(everyMs: number, now: () => number, sleep: (ms: number) => Promise<void>) {
  let last = -Infinity;
  let sent = 0;
  const ifDue = (): void => {
    if (now() - last < everyMs) return;
    beat();
    last = now();
    sent += 1;
  };
  return {
    ifDue,
    /** Wait `ms`, heartbeating when due on the way. */
    async pause(ms: number): Promise<void> {
      const until = now() + ms;
      for (let left = ms; left > 0; left = until - now()) {
        await sleep(Math.min(left, Math.max(1, last + everyMs - now())));
        ifDue();
      }
    },
    sent: (): number => sent,
  };
}

/** How long one signal-with-start of a watcher stands for every caller in this process. */
export const NUDGE_REUSE_MS = 2_000;

type Nudge = (c: Client, input: WatchInput) => Promise<string>;

/**
 * {@link startOrNudge}, at most once per watcher per `reuseMs` in this process: callers within the
 * window share the first one's answer (a failure is forgotten at once). Hazard: every nudge costs
 * the watcher a signal, a cancelled long poll and a look; 500 launches at once each nudging grew
 * its history to 3 MB and one workflow task to 10 s. The watcher never ends by itself, so a nudge
 * that answered moments ago still means it runs.
 */
function nudgeOnce(deps: Pick<WatcherDeps, 'owner' | 'watcher' | 'now'>, reuseMs = NUDGE_REUSE_MS): Nudge {
  const now = deps.now ?? Date.now;
  const recent = new Map<string, { atMs: number; done: Promise<string> }>();
  return (c, input) => {
    const key = `${input.taskQueue}\n${watcherWorkflowId(deps.owner, input.at.cloud, input.at.region)}`;
    const hit = recent.get(key);
    if (hit && now() - hit.atMs < reuseMs) return hit.done;
    if (recent.size >= 256) for (const [k, v] of recent) if (now() - v.atMs >= reuseMs) recent.delete(k);
    const entry = { atMs: now(), done: startOrNudge(c, deps, input) };
    recent.set(key, entry);
    entry.done.catch(() => recent.get(key) === entry && recent.delete(key));
    return entry.done;
  };
}

/** Signal-with-start of the watcher of `input.at` on `input.taskQueue`; its workflow ID. */
async function startOrNudge(c: Client, deps: Pick<WatcherDeps, 'owner' | 'watcher'>, input: WatchInput): Promise<string> {
  const { cloud, region } = input.at;
  const workflowId = watcherWorkflowId(deps.owner, cloud, region);
  const start: WatcherInput = { deployment: deps.owner, cloud, region, ...(deps.watcher ? { tuning: deps.watcher } : {}) };
  await c.workflow.signalWithStart('accountWatcherWorkflow', {
    workflowId,
    taskQueue: input.taskQueue,
    args: [start],
    signal: watcherNudgeSignal,
    signalArgs: deps.watcher ? [deps.watcher] : [],
    staticSummary: `account watcher: ${cloud}/${region}`,
  });
  return workflowId;
}

/**
 * For the create activity: before it makes side resources and an instance at `at`, make sure the
 * watcher there runs, so that what a workflow terminated before Ready (or mid-create) leaves is
 * still swept. The watcher runs on the main task queue of the workflow that scheduled the create
 * (the activity runs on its cloud's queue, named after it). Never throws: a failure costs only
 * that safety net, never the create (the VM's `ensureWatcher` at Ready is the second chance).
 */
export function watcherBeforePrepare(
  deps: Pick<WatcherDeps, 'owner' | 'watcher' | 'client' | 'now'>,
): (at: { cloud: string; region: string }) => Promise<void> {
  const nudge = nudgeOnce(deps);
  return async (at) => {
    const ctx = activityContext();
    if (!ctx) return;
    try {
      const c = deps.client?.() ?? ctx.client;
      const taskQueue = mainTaskQueue(ctx.info.taskQueue, at.cloud);
      const watcher = await nudge(c, { at: { cloud: at.cloud, region: at.region }, taskQueue });
      activityLog('info', 'account watcher running (resources about to be made)', { workflowId: watcher });
    } catch (err) {
      activityLog('warn', 'could not start the account watcher before the create; the VM starts it at Ready', {
        cloud: at.cloud,
        region: at.region,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  };
}

export function createWatcherActivities(deps: WatcherDeps) {
  const client = deps.client ?? (() => Context.current().client);
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? pause;
  const nudge = nudgeOnce(deps);

  /**
   * One look: the open owners first, then the cloud's list (an instance torn down in between
   * then belongs to a VM whose stage is no longer Ready, so it is never called lost).
   */
  const look = async (input: WatchInput): Promise<{ instances: Owned[]; owners: OwnerVm[]; sides?: SideResource[] }> => {
    const p = providerOf(deps.registry, input.at.cloud);
    const owners: OwnerVm[] = [];
    for await (const wf of client().workflow.list({ query: ownersQuery(input) })) {
      const sa = wf.typedSearchAttributes;
      const vmName = sa.get(SA.vmName);
      if (vmName) owners.push({ workflowId: wf.workflowId, vmName, stage: (sa.get(SA.stage) ?? 'pending') as Stage });
    }
    const where = { cloud: input.at.cloud, region: input.at.region };
    const instances = await translated(() => p.inventory(where));
    const sides = p.sideInventory ? await translated(() => p.sideInventory!(where)) : undefined;
    // Before anything is called an orphan: an open vmWorkflow of that name anywhere in the
    // namespace (another region, cloud or task queue) owns it. Deleting a live VM is worse than a late sweep.
    const placed = new Set(owners.map((o) => o.vmName));
    const unowned = [...new Set([...instances, ...(sides ?? [])].map((i) => i.vmName).filter((n) => !placed.has(n)))];
    for (let i = 0; i < unowned.length; i += NAMES_PER_QUERY) {
      for await (const wf of client().workflow.list({ query: openByNameQuery(unowned.slice(i, i + NAMES_PER_QUERY)) })) {
        const vmName = wf.typedSearchAttributes.get(SA.vmName);
        if (vmName) owners.push({ workflowId: wf.workflowId, vmName, stage: (wf.typedSearchAttributes.get(SA.stage) ?? 'pending') as Stage, elsewhere: true });
      }
    }
    return { instances, owners, ...(sides ? { sides } : {}) };
  };

  return {
    /**
     * A cycle's view. Long-polls while idle: looks again at the planned interval until the view
     * changes, someone must be told or something deleted, or `quietWindowMs` is spent, so an
     * idle watcher costs one activity and a few heartbeats per window instead of an activity and
     * a timer per look.
     */
    async watchCycle(input: WatchCycleInput): Promise<WatchView> {
      const startedAt = now();
      // Histories from before a tuning field existed schedule this with it missing.
      const t = withWatcherTuning(input.tuning);
      const hb = heartbeats(heartbeatEveryMs(t), now, sleep);
      for (let looks = 1; ; looks++) {
        hb.ifDue();
        const view = await look(input);
        const signature = viewSignature(view);
        const plan = planCycle(view, input.known, now(), t);
        const waitMs = plan.nextCycleInMs;
        if (input.lastSignature === undefined || cycleMustReturn(plan, signature, input.lastSignature)) return { ...view, signature, looks, beats: hb.sent() };
        const windowSpent = now() - startedAt + waitMs >= t.quietWindowMs;
        await hb.pause(waitMs);
        // Return after the wait, not after the look: the next cycle's first look keeps the cadence.
        if (windowSpent) return { ...view, signature, looks, beats: hb.sent() };
      }
    },

    /** Start the watcher of `at` unless it runs, and wake it (signal-with-start; idempotent by ID; once per {@link NUDGE_REUSE_MS} per process). */
    async ensureWatcher(input: WatchInput): Promise<{ workflowId?: string }> {
      beat();
      const workflowId = await nudge(client(), input);
      activityLog('info', 'account watcher running', { workflowId });
      return { workflowId };
    },
  };
}
