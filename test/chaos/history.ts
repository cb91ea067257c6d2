/**
 * Reads a workflow history (the JSON form of `historyToJSON`) into the facts the oracle checks:
 * activities with their decoded inputs and outcomes, stage upserts, signals, cancel requests and
 * how the run closed. Pure (no Temporal import), so the oracle is unit-tested on synthetic facts.
 */

export type Fact =
  | { e: 'activity'; id: number; type: string; input: unknown[] }
  | { e: 'activityDone'; id: number; result: unknown }
  /**
   * `prepareStep`: a prepareAndCreate whose prepare step failed (nothing was created). `released`:
   * its refused create (Capacity, Quota, Unavailable) was released by the activity itself.
   */
  | { e: 'activityFailed'; id: number; failureType: string; prepareStep?: boolean; released?: boolean }
  /** `atMs`: the event's time (epoch ms), when the history has it. */
  | { e: 'stage'; stage: string; atMs?: number }
  | { e: 'signal'; name: string }
  | { e: 'cancelRequested' }
  | {
      e: 'closed';
      status: 'completed' | 'failed' | 'cancelled' | 'terminated' | 'continued' | 'timedout';
      result?: unknown;
      failureType?: string;
      details?: unknown;
    };

export interface RunFacts {
  workflowId: string;
  runId: string;
  vmName: string;
  facts: Fact[];
}

interface JsonPayload {
  data?: string;
}
interface JsonPayloads {
  payloads?: JsonPayload[];
}
interface JsonFailure {
  message?: string;
  applicationFailureInfo?: { type?: string; details?: JsonPayloads };
  timeoutFailureInfo?: unknown;
  canceledFailureInfo?: unknown;
  cause?: JsonFailure;
}
type JsonEvent = Record<string, unknown> & { eventId: string; eventType: string };

function decode(p: JsonPayload | undefined): unknown {
  if (!p?.data) return undefined;
  const text = Buffer.from(p.data, 'base64').toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const decodeAll = (ps: JsonPayloads | undefined): unknown[] => (ps?.payloads ?? []).map(decode);

function failureTypeOf(f: JsonFailure | undefined): string {
  if (!f) return 'Error';
  if (f.applicationFailureInfo) return f.applicationFailureInfo.type ?? 'Error';
  if (f.timeoutFailureInfo) return 'Timeout';
  if (f.canceledFailureInfo) return 'Cancelled';
  return f.cause ? failureTypeOf(f.cause) : 'Error';
}

/** Facts of one run, in history order. */
export function readHistory(json: string, workflowId: string, runId: string, vmName: string): RunFacts {
  const events = (JSON.parse(json) as { events?: JsonEvent[] }).events ?? [];
  const facts: Fact[] = [];
  for (const ev of events) {
    const id = Number(ev.eventId);
    const a = (name: string): Record<string, unknown> => (ev[name] ?? {}) as Record<string, unknown>;
    switch (ev.eventType) {
      case 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED': {
        const at = a('activityTaskScheduledEventAttributes');
        facts.push({ e: 'activity', id, type: (at.activityType as { name: string }).name, input: decodeAll(at.input as JsonPayloads) });
        break;
      }
      case 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED': {
        const at = a('activityTaskCompletedEventAttributes');
        facts.push({ e: 'activityDone', id: Number(at.scheduledEventId), result: decodeAll(at.result as JsonPayloads)[0] });
        break;
      }
      case 'EVENT_TYPE_ACTIVITY_TASK_FAILED': {
        const at = a('activityTaskFailedEventAttributes');
        const f = at.failure as JsonFailure | undefined;
        const app = f?.applicationFailureInfo ? f : (f?.cause ?? f);
        const d = decodeAll(app?.applicationFailureInfo?.details)[0] as { phase?: string; released?: boolean } | undefined;
        const prepareStep = d?.phase === 'prepare';
        facts.push({
          e: 'activityFailed',
          id: Number(at.scheduledEventId),
          failureType: failureTypeOf(app),
          ...(prepareStep ? { prepareStep } : {}),
          ...(d?.released === true ? { released: true } : {}),
        });
        break;
      }
      case 'EVENT_TYPE_MARKER_RECORDED': {
        // A local activity: scheduled and ended in one marker.
        const at = a('markerRecordedEventAttributes');
        if (at.markerName !== 'core_local_activity') break;
        const details = (at.details ?? {}) as Record<string, JsonPayloads>;
        const data = decodeAll(details.data)[0] as { activity_type?: string } | undefined;
        facts.push({ e: 'activity', id, type: data?.activity_type ?? '?', input: [] });
        const f = at.failure as JsonFailure | undefined;
        facts.push(f ? { e: 'activityFailed', id, failureType: failureTypeOf(f) } : { e: 'activityDone', id, result: decodeAll(details.result)[0] });
        break;
      }
      case 'EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT':
        facts.push({ e: 'activityFailed', id: Number(a('activityTaskTimedOutEventAttributes').scheduledEventId), failureType: 'Timeout' });
        break;
      case 'EVENT_TYPE_ACTIVITY_TASK_CANCELED':
        facts.push({ e: 'activityFailed', id: Number(a('activityTaskCanceledEventAttributes').scheduledEventId), failureType: 'Cancelled' });
        break;
      case 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES': {
        const fields =
          ((a('upsertWorkflowSearchAttributesEventAttributes').searchAttributes ?? {}) as { indexedFields?: Record<string, JsonPayload> }).indexedFields ?? {};
        const stage = decode(fields.GpuprovStage);
        const atMs = typeof ev.eventTime === 'string' ? Date.parse(ev.eventTime) : NaN;
        if (typeof stage === 'string') facts.push({ e: 'stage', stage, ...(Number.isFinite(atMs) ? { atMs } : {}) });
        break;
      }
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED':
        facts.push({ e: 'signal', name: String(a('workflowExecutionSignaledEventAttributes').signalName) });
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED':
        facts.push({ e: 'cancelRequested' });
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED':
        facts.push({ e: 'closed', status: 'completed', result: decodeAll(a('workflowExecutionCompletedEventAttributes').result as JsonPayloads)[0] });
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED': {
        const f = a('workflowExecutionFailedEventAttributes').failure as JsonFailure | undefined;
        facts.push({ e: 'closed', status: 'failed', failureType: failureTypeOf(f), details: decodeAll(f?.applicationFailureInfo?.details)[0] });
        break;
      }
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED':
        facts.push({ e: 'closed', status: 'cancelled' });
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED':
        facts.push({ e: 'closed', status: 'terminated' });
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT':
        facts.push({ e: 'closed', status: 'timedout' });
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW':
        facts.push({ e: 'closed', status: 'continued' });
        break;
      default:
        break;
    }
  }
  return { workflowId, runId, vmName, facts };
}
