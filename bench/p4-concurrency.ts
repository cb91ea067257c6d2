/**
 * P4: N launches at once on one worker against a FakeProvider with a simulated boot: wall time
 * until every VM is Ready, peak RSS of this process (which hosts the worker), history events.
 */
import { startAttributes } from '../src/core/search-attributes';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { teardownSignal, vmWorkflowId } from '../src/core/api';
import type { vmWorkflow } from '../src/workflows';
import { eventsOf, readyIndex, taskSpans, timeBreakdown, timeOf, type HistoryEvent, type TaskSpans } from './history';
import { sleep } from './stats';

export interface ConcurrencyResult {
  n: number;
  bootMs: number;
  /** First start call → last VM's `ready` event. */
  wallMs: number;
  /** Time for the N start calls alone. */
  startCallsMs: number;
  ready: number;
  allReady: boolean;
  rssBeforeMb: number;
  rssPeakMb: number;
  eventsToReadyTotal: number;
  eventsLifecycleTotal: number;
  /** CPU seconds while launching: this process (worker + client + fake cloud) and the dev server. */
  cpuS: { bench: number; server: number };
  /** Per VM up to Ready, medians: workflow tasks waiting for a worker, running, activities. */
  perVmToReady: { wtQueueMs: number; wtRunMs: number; activityMs: number; workflowTasks: number };
  /** Workflow tasks (started → completed) of the account watchers and ledger pages started during the launch. */
  helperTasks: Record<'watcher' | 'pages', TaskSpans>;
}

/** Task spans of every run of `type` open at some time since `fromMs`, over tasks started in [fromMs, toMs]. */
async function spansOf(client: Client, type: string, fromMs: number, toMs: number): Promise<TaskSpans> {
  const since = new Date(fromMs).toISOString();
  const handles: WorkflowHandle[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${type}' AND (ExecutionStatus = 'Running' OR CloseTime >= '${since}')` })) {
    handles.push(client.workflow.getHandle(wf.workflowId, wf.runId));
  }
  return taskSpans(await allEvents(handles), { fromMs, toMs });
}

/** Histories of all handles, `width` at a time. */
async function allEvents(handles: WorkflowHandle[], width = 25): Promise<HistoryEvent[][]> {
  const out: HistoryEvent[][] = [];
  for (let i = 0; i < handles.length; i += width) out.push(...(await Promise.all(handles.slice(i, i + width).map((h) => eventsOf(h)))));
  return out;
}

const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export async function measureConcurrency(
  client: Client,
  taskQueue: string,
  cloud: string,
  n: number,
  bootMs: number,
  timeoutMs: number,
  serverCpuS: () => number,
): Promise<ConcurrencyResult> {
  const mb = (b: number): number => Math.round(b / 1024 / 1024);
  const rssBefore = process.memoryUsage.rss();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 50);
  const tag = Date.now();
  const cpu0 = process.cpuUsage();
  const server0 = serverCpuS();
  const t0 = Date.now();
  let handles: WorkflowHandle<typeof vmWorkflow>[] = [];
  try {
    handles = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
          taskQueue,
          workflowId: `${vmWorkflowId(`p4-${i}`)}-${tag}`,
          typedSearchAttributes: startAttributes(`p4-${i}`),
          args: [{ spec: { name: `p4-${i}`, clouds: [cloud], k8s: 'off' }, tuning: { healthIntervalMs: 10 * 60_000 } }],
        }),
      ),
    );
    const startCallsMs = Date.now() - t0;
    const query = `TaskQueue = "${taskQueue}" AND GpuprovStage = "ready" AND WorkflowId STARTS_WITH "vm-p4-"`;
    let ready = 0;
    while (Date.now() - t0 < timeoutMs) {
      ready = (await client.workflow.count(query)).count;
      if (ready >= n) break;
      await sleep(250);
    }
    clearInterval(sampler);
    const cpu = process.cpuUsage(cpu0);
    const cpuS = { bench: Math.round((cpu.user + cpu.system) / 1e4) / 100, server: Math.round((serverCpuS() - server0) * 100) / 100 };
    // Exact times from the histories (visibility is only the signal to stop waiting).
    let last = 0;
    let eventsToReady = 0;
    let readyCount = 0;
    const parts: ReturnType<typeof timeBreakdown>[] = [];
    for (const ev of await allEvents(handles)) {
      const ri = readyIndex(ev);
      if (ri >= 0) {
        readyCount += 1;
        eventsToReady += ri + 1;
        last = Math.max(last, timeOf(ev[ri]!));
        parts.push(timeBreakdown(ev.slice(0, ri + 1)));
      }
    }
    const toMs = readyCount === n ? last : Date.now();
    const helperTasks = {
      watcher: await spansOf(client, 'accountWatcherWorkflow', t0, toMs),
      pages: await spansOf(client, 'ledgerPageWorkflow', t0, toMs),
    };
    await Promise.all(handles.map((h) => h.signal(teardownSignal)));
    await Promise.all(handles.map((h) => h.result().catch(() => undefined)));
    const lifecycle = (await allEvents(handles)).reduce((a, ev) => a + ev.length, 0);
    return {
      n,
      bootMs,
      wallMs: Math.round((readyCount === n ? last : Date.now()) - t0),
      startCallsMs,
      ready: readyCount,
      allReady: readyCount === n,
      rssBeforeMb: mb(rssBefore),
      rssPeakMb: mb(rssPeak),
      eventsToReadyTotal: eventsToReady,
      eventsLifecycleTotal: lifecycle,
      cpuS,
      perVmToReady: {
        wtQueueMs: Math.round(med(parts.map((p) => p.wtQueueMs))),
        wtRunMs: Math.round(med(parts.map((p) => p.wtRunMs))),
        activityMs: Math.round(med(parts.map((p) => p.activityMs))),
        workflowTasks: med(parts.map((p) => p.workflowTasks)),
      },
      helperTasks,
    };
  } finally {
    clearInterval(sampler);
  }
}
