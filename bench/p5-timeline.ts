/**
 * Where P5's milliseconds go: `npx tsx bench/p5-timeline.ts [--runs N] [--refusals N] [--partitions N]`. Runs
 * P5's failover (9 Capacity answers, then the 10th offer) N times (default 4) after 5 s of quiet
 * each, and prints the last run's history as a timeline (server event times, ms from the start)
 * with every wait named, then per failed attempt the sum of each kind of wait over all runs but
 * the first (its worker caches are cold):
 *
 * | wait                  | from → to                                                        |
 * |-----------------------|------------------------------------------------------------------|
 * | wft-queue             | workflow task scheduled → started (the worker polled it)         |
 * | wft-run               | workflow task started → completed (worker code + the round trip) |
 * | act-queue             | activity scheduled → started (matching, the cloud's task queue)  |
 * | act-run               | activity started → completed/failed (the activity's own work)    |
 * | act-to-wft            | activity completed/failed → the next workflow task scheduled     |
 *
 * `--partitions N` starts the dev server with N task-queue partitions (the dev server's default
 * is 4): one partition means no forwarding between partitions when few workers poll.
 */
import { startAttributes } from '../src/core/search-attributes';
import { teardownSignal, vmWorkflowId } from '../src/core/api';
import type { vmWorkflow } from '../src/workflows';
import { failoverOffers, forgetCapacity, FAILOVER_OFFERS } from './p5-failover';
import { eventsOf, kindOf, readyIndex, timeOf, type HistoryEvent } from './history';
import { startLab } from './lab';
import { sleep } from './stats';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('--runs', 4);
const PARTITIONS = arg('--partitions', 0);
/** `--refusals N`: how many offers answer Capacity before one works (P5: 9; 0 is P2's single-attempt launch). */
const REFUSALS = arg('--refusals', FAILOVER_OFFERS - 1);
const log = (s: string): void => void process.stderr.write(`[timeline] ${s}\n`);

type Wait = 'wft-queue' | 'wft-run' | 'act-queue' | 'act-run' | 'act-to-wft';

/** The activity type and task queue of each scheduled event, by event id. */
function scheduledActivities(events: HistoryEvent[]): Map<string, { name: string; queue: string }> {
  const out = new Map<string, { name: string; queue: string }>();
  for (const e of events) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a) out.set(String(e.eventId), { name: a.activityType?.name ?? '?', queue: a.taskQueue?.name ?? '?' });
  }
  return out;
}

/** Each event's wait (the time since the event it follows from), named. */
function waitsOf(events: HistoryEvent[]): { e: HistoryEvent; wait?: Wait; ms: number; label: string }[] {
  const at = new Map(events.map((e) => [String(e.eventId), timeOf(e)] as const));
  const acts = scheduledActivities(events);
  let lastActivityEnd: number | undefined;
  return events.map((e) => {
    const t = timeOf(e);
    const since = (id: unknown): number => t - (at.get(String(id)) ?? t);
    const k = kindOf(e);
    const act = (id: unknown): string => {
      const a = acts.get(String(id));
      return a ? `${a.name} @${a.queue.replace(/^bench-[0-9a-f-]+/, 'Q')}` : '?';
    };
    if (e.workflowTaskStartedEventAttributes) return { e, wait: 'wft-queue', ms: since(e.workflowTaskStartedEventAttributes.scheduledEventId), label: k };
    if (e.workflowTaskCompletedEventAttributes) return { e, wait: 'wft-run', ms: since(e.workflowTaskCompletedEventAttributes.startedEventId), label: k };
    if (e.activityTaskStartedEventAttributes)
      return {
        e,
        wait: 'act-queue',
        ms: since(e.activityTaskStartedEventAttributes.scheduledEventId),
        label: `${k} ${act(e.activityTaskStartedEventAttributes.scheduledEventId)}`,
      };
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    if (done) {
      lastActivityEnd = t;
      const why = e.activityTaskFailedEventAttributes?.failure?.message;
      return { e, wait: 'act-run', ms: since(done.startedEventId), label: `${k} ${act(done.scheduledEventId)}${why ? `: ${why.slice(0, 80)}` : ''}` };
    }
    if (e.workflowTaskScheduledEventAttributes && lastActivityEnd !== undefined) {
      const ms = t - lastActivityEnd;
      lastActivityEnd = undefined;
      return { e, wait: 'act-to-wft', ms, label: k };
    }
    if (e.activityTaskScheduledEventAttributes) return { e, ms: 0, label: `${k} ${act(e.eventId)}` };
    return { e, ms: 0, label: k };
  });
}

async function oneRun(lab: Awaited<ReturnType<typeof startLab>>, i: number): Promise<HistoryEvent[]> {
  const fake = lab.fake('p5');
  const name = `tl-${i}`;
  fake.clearRules();
  await forgetCapacity(lab.client, lab.taskQueue);
  fake.script(...Array.from({ length: REFUSALS }, (_, k) => ({ primitive: 'create' as const, region: `r${k}`, error: 'Capacity' as const, times: -1 })));
  const h = await lab.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
    taskQueue: lab.taskQueue,
    workflowId: `${vmWorkflowId(name)}-${Date.now()}`,
    typedSearchAttributes: startAttributes(name),
    args: [{ spec: { name, clouds: ['p5'], k8s: 'off' }, tuning: { healthIntervalMs: 10 * 60_000 } }],
  });
  let events: HistoryEvent[] = [];
  for (let tries = 0; tries < 600 && readyIndex(events) < 0; tries++) {
    await sleep(100);
    events = await eventsOf(h);
  }
  if (readyIndex(events) < 0) throw new Error(`timeline run ${name}: never Ready`);
  await h.signal(teardownSignal);
  await h.result();
  return events.slice(0, readyIndex(events) + 1);
}

/** The other workflows' history events over the whole run, by type: the work that shares the cores with the launches. */
async function otherWork(lab: Awaited<ReturnType<typeof startLab>>, runs: number): Promise<void> {
  const byType = new Map<string, { runs: number; events: number }>();
  for await (const w of lab.client.workflow.list()) {
    const t = byType.get(w.type) ?? { runs: 0, events: 0 };
    t.runs += 1;
    t.events += (await lab.client.workflow.getHandle(w.workflowId, w.runId).describe()).historyLength;
    byType.set(w.type, t);
  }
  process.stdout.write(`\nhistory events of every workflow over the ${runs} runs (teardowns included):\n`);
  for (const [type, t] of byType) process.stdout.write(`  ${type.padEnd(28)} ${String(t.runs).padStart(3)} runs ${String(t.events).padStart(5)} events\n`);
}

async function main(): Promise<void> {
  const lab = await startLab({ fakes: [{ name: 'p5' }], log, scheduleDelay: () => undefined, ...(PARTITIONS > 0 ? { partitions: PARTITIONS } : {}) });
  try {
    lab.fake('p5').setOffers(failoverOffers('p5'));
    const runs: HistoryEvent[][] = [];
    for (let i = 0; i < RUNS; i++) {
      await sleep(5_000);
      runs.push(await oneRun(lab, i));
    }
    const last = runs[runs.length - 1]!;
    const t0 = timeOf(last[0]!);
    for (const w of waitsOf(last)) {
      const wait = w.wait ? `${w.wait.padEnd(10)} ${String(Math.round(w.ms)).padStart(4)} ms` : ''.padEnd(18);
      process.stdout.write(`${String(Math.round(timeOf(w.e) - t0)).padStart(6)}  ${wait}  ${w.label}\n`);
    }
    const totals = new Map<Wait, number>();
    const warm = runs.length > 1 ? runs.slice(1) : runs;
    for (const run of warm) for (const w of waitsOf(run)) if (w.wait) totals.set(w.wait, (totals.get(w.wait) ?? 0) + w.ms);
    process.stdout.write(`\n${last.length} events to Ready\n`);
    const toReady = warm.map((r) => timeOf(r[r.length - 1]!) - timeOf(r[0]!));
    process.stdout.write(`\nper run (mean of ${warm.length}): start → Ready ${Math.round(toReady.reduce((a, b) => a + b, 0) / warm.length)} ms\n`);
    for (const [wait, ms] of totals)
      process.stdout.write(
        `  ${wait.padEnd(10)} ${Math.round(ms / warm.length)} ms per run, ${Math.round(ms / warm.length / FAILOVER_OFFERS)} ms per attempt\n`,
      );
    await otherWork(lab, runs.length);
  } finally {
    await lab.close();
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
