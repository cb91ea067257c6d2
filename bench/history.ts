/** Reading workflow histories: event categories, the `ready` moment, event times. */
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { percentile, round } from './stats';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** `activityTaskScheduled`, `upsertWorkflowSearchAttributes`, … (the event's attributes field, without the suffix). */
export function kindOf(e: HistoryEvent): string {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k] != null);
  return key ? key.replace(/EventAttributes$/, '') : 'unknown';
}

export function timeOf(e: HistoryEvent): number {
  const t = e.eventTime;
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

export async function eventsOf(h: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await h.fetchHistory()).events ?? [];
}

/** The GpuprovStage value an upsert event sets, if any. */
export function upsertedStage(e: HistoryEvent): string | undefined {
  const data = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.GpuprovStage?.data;
  if (!data) return undefined;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8')) as string;
  } catch {
    return undefined;
  }
}

/** Index of the event that sets stage `ready` (−1 when never). */
export function readyIndex(events: HistoryEvent[]): number {
  return events.findIndex((e) => upsertedStage(e) === 'ready');
}

/** Events by category: workflow tasks, activities (by type), upserts, timers, other; only those `keep` says (names still read from all). */
export function breakdown(events: HistoryEvent[], keep: (e: HistoryEvent) => boolean = () => true): Record<string, number> {
  const out: Record<string, number> = {};
  const activityName = new Map<string, string>();
  for (const e of events) {
    const k = kindOf(e);
    let cat: string;
    if (k.startsWith('workflowTask')) cat = 'workflow tasks';
    else if (k === 'activityTaskScheduled') {
      const name = e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
      activityName.set(String(e.eventId), name);
      cat = `activity ${name}`;
    } else if (k.startsWith('activityTask')) {
      const a =
        e.activityTaskStartedEventAttributes ??
        e.activityTaskCompletedEventAttributes ??
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes;
      const sched = a && 'scheduledEventId' in a ? String(a.scheduledEventId) : '';
      cat = `activity ${activityName.get(sched) ?? '?'}`;
    } else if (k === 'upsertWorkflowSearchAttributes') cat = 'search-attribute upserts';
    else if (k.startsWith('timer')) cat = 'timers';
    else cat = k;
    if (keep(e)) out[cat] = (out[cat] ?? 0) + 1;
  }
  return out;
}

/** Time the workflow code first saw the result of activity `name` (the workflow task started after its completion). */
export function activityKnownAt(events: HistoryEvent[], name: string): number | undefined {
  const sched = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name);
  if (!sched) return undefined;
  const done = events.findIndex(
    (e) => e.activityTaskCompletedEventAttributes && String(e.activityTaskCompletedEventAttributes.scheduledEventId) === String(sched.eventId),
  );
  if (done < 0) return undefined;
  const wt = events.slice(done + 1).find((e) => kindOf(e) === 'workflowTaskStarted');
  return wt ? timeOf(wt) : undefined;
}

/**
 * Where a run's time went, from the server's event times: workflow tasks waiting for the worker
 * (scheduled → started), the worker running them (started → completed, incl. the round trip),
 * activities (scheduled → completed, incl. retries/polling), and timers.
 */
export function timeBreakdown(events: HistoryEvent[]): { wtQueueMs: number; wtRunMs: number; workflowTasks: number; activityMs: number; timerMs: number } {
  const at = new Map<string, number>();
  for (const e of events) at.set(String(e.eventId), timeOf(e));
  let wtQueueMs = 0;
  let wtRunMs = 0;
  let workflowTasks = 0;
  let activityMs = 0;
  let timerMs = 0;
  for (const e of events) {
    const t = timeOf(e);
    if (e.workflowTaskStartedEventAttributes) wtQueueMs += t - (at.get(String(e.workflowTaskStartedEventAttributes.scheduledEventId)) ?? t);
    if (e.workflowTaskCompletedEventAttributes) {
      wtRunMs += t - (at.get(String(e.workflowTaskCompletedEventAttributes.startedEventId)) ?? t);
      workflowTasks += 1;
    }
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    if (done) activityMs += t - (at.get(String(done.scheduledEventId)) ?? t);
    if (e.timerFiredEventAttributes) timerMs += t - (at.get(String(e.timerFiredEventAttributes.startedEventId)) ?? t);
  }
  return { wtQueueMs, wtRunMs, workflowTasks, activityMs, timerMs };
}

/** Each activity type's time in a run: queued (scheduled → started) and running (started → completed or failed), summed over its calls. */
export function activitySteps(events: HistoryEvent[]): Record<string, { queueMs: number; runMs: number }> {
  const at = new Map<string, number>();
  const name = new Map<string, string>();
  const out: Record<string, { queueMs: number; runMs: number }> = {};
  for (const e of events) {
    const t = timeOf(e);
    at.set(String(e.eventId), t);
    const s = e.activityTaskScheduledEventAttributes;
    if (s) name.set(String(e.eventId), s.activityType?.name ?? '?');
    const started = e.activityTaskStartedEventAttributes;
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    const sched = String((started ?? done)?.scheduledEventId ?? '');
    if (!sched || !name.has(sched)) continue;
    const step = (out[name.get(sched)!] ??= { queueMs: 0, runMs: 0 });
    if (started) step.queueMs += t - (at.get(sched) ?? t);
    if (done) step.runMs += t - (at.get(String(done.startedEventId)) ?? t);
  }
  return out;
}

/** Every workflow task's duration (started → completed, ms) over these histories, of those started within [fromMs, toMs]. */
export function workflowTaskDurations(histories: readonly HistoryEvent[][], fromMs = -Infinity, toMs = Infinity): number[] {
  const out: number[] = [];
  for (const h of histories) {
    const at = new Map(h.map((e) => [String(e.eventId), timeOf(e)] as const));
    for (const e of h) {
      const done = e.workflowTaskCompletedEventAttributes;
      const started = done ? at.get(String(done.startedEventId)) : undefined;
      if (started !== undefined && started >= fromMs && started <= toMs) out.push(timeOf(e) - started);
    }
  }
  return out;
}

/** Workflow task spans (started → completed, server times) of the tasks started within a window: their count and percentiles, ms. */
export interface TaskSpans {
  tasks: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export function taskSpans(histories: readonly HistoryEvent[][], w: { fromMs: number; toMs: number }): TaskSpans {
  const xs = workflowTaskDurations(histories, w.fromMs, w.toMs);
  const at = (p: number): number => round(percentile(xs, p));
  return { tasks: xs.length, p50Ms: at(50), p95Ms: at(95), p99Ms: at(99), maxMs: at(100) };
}

/** The longest workflow task (started → completed) over these histories, ms. */
export function longestWorkflowTaskMs(histories: readonly HistoryEvent[][]): number {
  return workflowTaskDurations(histories).reduce((a, b) => Math.max(a, b), 0);
}
