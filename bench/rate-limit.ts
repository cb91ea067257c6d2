/**
 * Rate: N launches at once on a FakeProvider whose task queue has an activities-per-second limit
 * (src/core/rate-limits.ts). Counts the cloud activities the worker started (every attempt, from an
 * activity interceptor) and the adapter's create/observe calls, and reports the most in any 1 s
 * window (sliding) against the limit. Every VM is torn down before counting ends, so releases count too.
 *
 * The server's limiter is a token bucket per task-queue partition (the rate split across them), so a
 * queue that was idle may start a burst of activities above the rate for a second; the worker's
 * pacer (src/providers/pacer.ts) holds their vendor calls to the rate, and the vendor's view — the
 * adapter's calls in any 1 s — is the figure judged.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { teardownSignal, vmWorkflowId } from '../src/core/api';
import { startAttributes } from '../src/core/search-attributes';
import { cloudTaskQueue } from '../src/core/rate-limits';
import type { vmWorkflow } from '../src/workflows';
import type { FakeProvider } from '../test/harness/fake-provider';
import type { ActivityStart } from './lab';
import { sleep } from './stats';

export interface RateResult {
  n: number;
  limitPerSecond: number;
  /** Cloud-queue activity executions started, by activity type. */
  activityStarts: Record<string, number>;
  /** Most cloud-queue activity starts in any 1 s window. */
  maxActivityStartsPer1s: number;
  /** Most cloud-queue activity starts in any 10 s window, per second: the sustained rate. */
  maxActivityStartsPerSOver10s: number;
  /** Most calls the adapter saw (every primitive: plan, prepare, create, observe, delete, cleanup, …) in any 1 s window. */
  maxApiCallsPer1s: number;
  /** Adapter calls by primitive. */
  apiCalls: Record<string, number>;
  /** Cloud activity starts in each second from the first one. */
  startsBySecond: number[];
  /** Cloud activity starts over the whole run, per second. */
  meanActivityStartsPerS: number;
  /** First start call → every VM Ready, and → every VM gone. */
  readyMs: number;
  goneMs: number;
  ready: number;
}

/** The most timestamps in any window [t, t + windowMs). */
export function maxInWindow(times: number[], windowMs = 1_000): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

async function countWhere(client: Client, query: string): Promise<number> {
  return (await client.workflow.count(query)).count;
}

export async function measureRate(
  client: Client,
  taskQueue: string,
  fake: FakeProvider,
  starts: ActivityStart[],
  n: number,
  limitPerSecond: number,
  timeoutMs: number,
): Promise<RateResult> {
  const cloudQueue = cloudTaskQueue(taskQueue, fake.name);
  const from = starts.length;
  const callsFrom = fake.calls.length;
  const tag = Date.now();
  const t0 = Date.now();
  const handles: WorkflowHandle<typeof vmWorkflow>[] = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
        taskQueue,
        workflowId: `${vmWorkflowId(`rate-${i}`)}-${tag}`,
        typedSearchAttributes: startAttributes(`rate-${i}`),
        args: [{ spec: { name: `rate-${i}`, clouds: [fake.name], k8s: 'off' }, tuning: { healthIntervalMs: 60 * 60_000 } }],
      }),
    ),
  );
  const readyQuery = `TaskQueue = "${taskQueue}" AND GpuprovStage = "ready" AND WorkflowId STARTS_WITH "vm-rate-"`;
  let ready = 0;
  while (Date.now() - t0 < timeoutMs && (ready = await countWhere(client, readyQuery)) < n) await sleep(500);
  const readyMs = Date.now() - t0;
  await Promise.all(handles.map((h) => h.signal(teardownSignal)));
  await Promise.all(handles.map((h) => h.result().catch(() => undefined)));
  const goneMs = Date.now() - t0;

  const mine = starts.slice(from).filter((s) => s.taskQueue === cloudQueue);
  const byType: Record<string, number> = {};
  for (const s of mine) byType[s.activityType] = (byType[s.activityType] ?? 0) + 1;
  // The fake's `probe` is the SSH probe's stand-in, not a call to the vendor's API.
  const api = fake.calls.slice(callsFrom).filter((c) => c.primitive !== 'probe');
  const apiCalls: Record<string, number> = {};
  for (const c of api) apiCalls[c.primitive] = (apiCalls[c.primitive] ?? 0) + 1;
  const span = mine.length > 1 ? (mine[mine.length - 1]!.atMs - mine[0]!.atMs) / 1000 : 1;
  const bySecond: number[] = [];
  for (const st of mine) {
    const k = Math.floor((st.atMs - mine[0]!.atMs) / 1000);
    while (bySecond.length <= k) bySecond.push(0);
    bySecond[k]! += 1;
  }
  return {
    n,
    limitPerSecond,
    startsBySecond: bySecond,
    activityStarts: byType,
    maxActivityStartsPer1s: maxInWindow(mine.map((s) => s.atMs)),
    maxActivityStartsPerSOver10s:
      maxInWindow(
        mine.map((s) => s.atMs),
        10_000,
      ) / 10,
    maxApiCallsPer1s: maxInWindow(api.map((c) => c.at)),
    apiCalls,
    meanActivityStartsPerS: Math.round((mine.length / span) * 10) / 10,
    readyMs,
    goneMs,
    ready,
  };
}
