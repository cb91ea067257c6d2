/**
 * A VM workflow's history as plain steps for `provision explain`: every activity (name, the
 * summary the workflow gave it, input, result or failure, scheduled and ended times) and how the
 * run closed. Follows continue-as-new back to the run that launched the VM. Payloads are JSON
 * (the default converter, after the client's payload codecs); nothing here decides anything (see explain-report.ts).
 */
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { statusQuery, type LaunchFailureDetails, type VmStatus } from '../core/api';
import { SDK_FAILURE_KINDS } from '../core/failures';
import { decodeHistory } from '../codec/history';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];
type Failure = NonNullable<NonNullable<HistoryEvent['activityTaskFailedEventAttributes']>['failure']>;

export interface ActivityStep {
  name: string;
  summary?: string;
  scheduledAt: string;
  endedAt?: string;
  input: unknown[];
  result?: unknown;
  failure?: { type?: string; message: string };
}

export interface RunClose {
  status: 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed-out' | 'continued';
  at: string;
  result?: unknown;
  failure?: { type?: string; message: string; details?: unknown };
}

export interface VmHistory {
  workflowId: string;
  /** Runs read (more than one after continue-as-new). */
  runs: number;
  startedAt: string;
  activities: ActivityStep[];
  /** How the latest run closed; absent while it runs. */
  closed?: RunClose;
}

const MAX_RUNS = 20;

function decode(payloads: readonly Payload[] | null | undefined): unknown[] {
  return (payloads ?? []).map((p) => {
    try {
      return defaultPayloadConverter.fromPayload(p);
    } catch {
      return undefined;
    }
  });
}

const iso = (e: HistoryEvent): string => new Date(tsToMs(e.eventTime)).toISOString();

function failureOf(f: Failure | null | undefined): { type?: string; message: string; details?: unknown } {
  let root = f;
  while (root?.cause && !root.applicationFailureInfo) root = root.cause;
  const app = root?.applicationFailureInfo;
  const details = decode(app?.details?.payloads)[0];
  return { ...(app?.type ? { type: app.type } : {}), message: root?.message ?? f?.message ?? 'failed', ...(details !== undefined ? { details } : {}) };
}

/** The marker a local activity's outcome is recorded in (the SDK's core). */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** The steps of one run's events (pure). */
export function readEvents(events: readonly HistoryEvent[]): { startedAt: string; previousRunId?: string; activities: ActivityStep[]; closed?: RunClose } {
  const byId = new Map<string, ActivityStep>();
  const activities: ActivityStep[] = [];
  let startedAt = '';
  let previousRunId: string | undefined;
  let closed: RunClose | undefined;
  const end = (id: unknown, e: HistoryEvent, patch: Partial<ActivityStep>): void => {
    const step = byId.get(String(id));
    if (step) Object.assign(step, { endedAt: iso(e) }, patch);
  };
  let taskStartedAt = '';
  for (const e of events) {
    const at = iso(e);
    if (e.workflowTaskStartedEventAttributes) taskStartedAt = at;
    if (e.workflowExecutionStartedEventAttributes) {
      startedAt = at;
      previousRunId = e.workflowExecutionStartedEventAttributes.continuedExecutionRunId || undefined;
    } else if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      const summary = decode(e.userMetadata?.summary ? [e.userMetadata.summary] : [])[0];
      const step: ActivityStep = {
        name: a.activityType?.name ?? '?',
        scheduledAt: at,
        input: decode(a.input?.payloads),
        ...(typeof summary === 'string' ? { summary } : {}),
      };
      byId.set(String(e.eventId), step);
      activities.push(step);
    } else if (e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER) {
      // A local activity: one marker with its type and result, no input.
      const m = e.markerRecordedEventAttributes;
      const data = decode(m.details?.['data']?.payloads)[0] as { activity_type?: string } | undefined;
      const result = decode(m.details?.['result']?.payloads)[0];
      // Its result reached the workflow in the task that recorded it: workflow time is that task's start.
      const when = taskStartedAt || at;
      activities.push({
        name: data?.activity_type ?? '?',
        scheduledAt: when,
        endedAt: when,
        input: [],
        ...(m.failure ? { failure: failureOf(m.failure) } : { result }),
      });
    } else if (e.activityTaskCompletedEventAttributes) {
      const a = e.activityTaskCompletedEventAttributes;
      end(a.scheduledEventId, e, { result: decode(a.result?.payloads)[0] });
    } else if (e.activityTaskFailedEventAttributes) {
      const a = e.activityTaskFailedEventAttributes;
      const { type, message } = failureOf(a.failure);
      end(a.scheduledEventId, e, { failure: { ...(type ? { type } : {}), message } });
    } else if (e.activityTaskTimedOutEventAttributes) {
      end(e.activityTaskTimedOutEventAttributes.scheduledEventId, e, { failure: { type: 'TimedOut', message: 'activity timed out' } });
    } else if (e.activityTaskCanceledEventAttributes) {
      end(e.activityTaskCanceledEventAttributes.scheduledEventId, e, { failure: { type: SDK_FAILURE_KINDS.Cancelled, message: 'activity cancelled' } });
    } else if (e.workflowExecutionCompletedEventAttributes) {
      closed = { status: 'completed', at, result: decode(e.workflowExecutionCompletedEventAttributes.result?.payloads)[0] };
    } else if (e.workflowExecutionFailedEventAttributes) {
      closed = { status: 'failed', at, failure: failureOf(e.workflowExecutionFailedEventAttributes.failure) };
    } else if (e.workflowExecutionCanceledEventAttributes) closed = { status: 'cancelled', at };
    else if (e.workflowExecutionTerminatedEventAttributes) closed = { status: 'terminated', at };
    else if (e.workflowExecutionTimedOutEventAttributes) closed = { status: 'timed-out', at };
    else if (e.workflowExecutionContinuedAsNewEventAttributes) closed = { status: 'continued', at };
  }
  return { startedAt, ...(previousRunId ? { previousRunId } : {}), activities, ...(closed ? { closed } : {}) };
}

/** The VM's history, from the run that launched it to the latest one. */
export async function fetchVmHistory(client: Client, workflowId: string): Promise<VmHistory> {
  let runId: string | undefined;
  const runs: ReturnType<typeof readEvents>[] = [];
  for (let i = 0; i < MAX_RUNS; i++) {
    // Stored payloads, encrypted when the codec is on (src/codec): decoded as the client decodes.
    const h = await decodeHistory(await client.workflow.getHandle(workflowId, runId).fetchHistory(), client.options.loadedDataConverter.payloadCodecs);
    const run = readEvents(h.events ?? []);
    runs.unshift(run);
    if (!run.previousRunId) break;
    runId = run.previousRunId;
  }
  const latest = runs.at(-1);
  if (!latest) throw new WorkflowNotFoundError(`no history for ${workflowId}`, workflowId, undefined);
  return {
    workflowId,
    runs: runs.length,
    startedAt: runs[0]!.startedAt,
    activities: runs.flatMap((r) => r.activities),
    ...(latest.closed ? { closed: latest.closed } : {}),
  };
}

/**
 * The VM's status: a completed run's result (a VmStatus); else the status query (a running VM, or
 * a failed one while a worker can replay it), else the failed run's attempts table and error.
 */
export async function vmStatusOf(client: Client, workflowId: string, history: VmHistory, name: string): Promise<VmStatus> {
  // A completed run returned its final status: no query (no worker needed).
  const done = history.closed;
  if (done?.status === 'completed' && done.result && typeof done.result === 'object') return done.result as VmStatus;
  try {
    return await client.workflow.getHandle(workflowId).query(statusQuery);
  } catch (err) {
    const c = history.closed;
    if (!c) throw err;
    if (c.status === 'completed' && c.result && typeof c.result === 'object') return c.result as VmStatus;
    const details = c.failure?.details as LaunchFailureDetails | undefined;
    return {
      apiVersion: 1,
      name,
      stage: c.status === 'failed' ? 'failed' : c.status === 'cancelled' ? 'cancelled' : 'terminated',
      spec: { name },
      instanceIds: [],
      attempts: details?.attempts ?? [],
      createdAt: history.startedAt,
      endedAt: c.at,
      ...(c.failure ? { error: { kind: c.failure.type ?? 'Failed', message: c.failure.message } } : {}),
    };
  }
}
