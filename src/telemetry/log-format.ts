/**
 * One log entry as the worker writes it: a JSON object per line (files, pipes) or a plain line
 * (terminals), never colour codes. Pure: the logger (logger.ts) decides where lines go.
 *
 * Expected "not ready yet" polls — an activity failing with a retryable NotReady, SshNotReady or
 * SshAuthFailed, which is how the boot and SSH waits poll — become one DEBUG line, not the SDK's
 * `WARN Activity failed` with the whole failure.
 */
import { ApplicationFailure, type LogLevel, type LogMetadata } from '@temporalio/common';
import { FAILURE_TYPES, type FailureType } from '../core/failures';

export const LOG_LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

export const severity = (l: LogLevel): number => LOG_LEVELS.indexOf(l);

/** Failure types that only mean "look again later" while retryable. */
const POLL_TYPES: ReadonlySet<FailureType> = new Set([FAILURE_TYPES.NotReady, FAILURE_TYPES.SshNotReady, FAILURE_TYPES.SshAuthFailed]);

/** The SDK's timestamp (ns since the epoch, a bigint) on workflow lines, taken when the workflow logged. */
const LOG_TIMESTAMP = Symbol.for('log_timestamp');

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** These lead every line, in this order, when present. */
const LEADING = ['component', 'vmName', 'workflowId', 'attempt', 'cloud'] as const;

export interface LogEntry {
  time: Date;
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

function failureType(err: unknown): string | undefined {
  if (err instanceof ApplicationFailure) return err.type ?? undefined;
  return undefined;
}

function isExpectedPoll(message: string, meta: LogMetadata): boolean {
  const err: unknown = meta.error;
  if (message !== 'Activity failed' || !(err instanceof ApplicationFailure) || err.nonRetryable) return false;
  return POLL_TYPES.has(err.type as FailureType);
}

/** An error as a small object: ApplicationFailures by type and message (no stack: they are classified). */
export function errorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const type = failureType(err);
  const out: Record<string, unknown> = { name: err.name, message: err.message };
  if (type) out.type = type;
  else if (err.stack) out.stack = err.stack;
  if (err.cause instanceof Error) out.cause = `${err.cause.name}: ${err.cause.message}`;
  return out;
}

/** The VM name of a workflow id (`vm-<name>`), else undefined. */
export function vmNameOf(workflowId: unknown): string | undefined {
  return typeof workflowId === 'string' && workflowId.startsWith('vm-') ? workflowId.slice(3) : undefined;
}

/** What the SDK handed the logger, as one entry (the poll rule applied, the VM named). */
export function toEntry(level: LogLevel, message: string, meta: LogMetadata = {}, now: () => Date = () => new Date()): LogEntry {
  const ts: unknown = meta[LOG_TIMESTAMP];
  const time = typeof ts === 'bigint' ? new Date(Number(ts / 1_000_000n)) : now();
  // taskToken: an opaque blob; `attempt` of an activity line is its retry count (a poll's number),
  // while `attempt` elsewhere is the launch attempt (the offer being tried).
  const { sdkComponent, taskToken: _token, ...rest } = meta as Record<string, unknown>;
  const fields: Record<string, unknown> = { component: sdkComponent, ...rest };
  if (fields.activityType !== undefined && fields.attempt !== undefined) {
    fields.activityAttempt = fields.attempt;
    delete fields.attempt;
  }
  if (fields.vmName === undefined) fields.vmName = vmNameOf(fields.workflowId);
  if (isExpectedPoll(message, meta)) {
    const err = meta.error as ApplicationFailure;
    delete fields.error;
    return { time, level: 'DEBUG', msg: 'not ready yet', fields: { ...fields, failure: err.type, detail: err.message } };
  }
  if (fields.error !== undefined) fields.error = errorFields(fields.error);
  return { time, level, msg: message, fields };
}

function clean(value: unknown): unknown {
  const seen = new WeakSet<object>();
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(ANSI, '');
    if (typeof v === 'bigint') return v.toString();
    if (v instanceof Date) return v.toISOString();
    if (v instanceof Error) return walk(errorFields(v));
    if (typeof v !== 'object' || v === null) return typeof v === 'function' || typeof v === 'symbol' ? undefined : v;
    if (seen.has(v)) return '[circular]';
    seen.add(v);
    if (Array.isArray(v)) return v.map(walk);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const w = walk(x);
      if (w !== undefined) out[k] = w;
    }
    return out;
  };
  return walk(value);
}

/** The entry's fields, leading ones first, undefined ones dropped, strings without ANSI codes. */
function orderedFields(e: LogEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of LEADING) if (e.fields[k] !== undefined) out[k] = e.fields[k];
  for (const [k, v] of Object.entries(e.fields)) if (!(k in out) && v !== undefined) out[k] = v;
  return clean(out) as Record<string, unknown>;
}

/** `{"time":…,"level":"info","msg":…,"vmName":…,…}`: one line, no newline inside. */
export function jsonLine(e: LogEntry): string {
  return JSON.stringify({ time: e.time.toISOString(), level: e.level.toLowerCase(), msg: e.msg.replace(ANSI, ''), ...orderedFields(e) });
}

/** `12:00:01.234 INFO  msg vmName=gpu1 cloud=local …` for a terminal. */
export function textLine(e: LogEntry): string {
  const kv = Object.entries(orderedFields(e)).map(([k, v]) => `${k}=${typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)}`);
  return [e.time.toISOString().slice(11, 23), e.level.padEnd(5), e.msg.replace(ANSI, '').replace(/\n/g, '\n  '), ...kv].join(' ');
}
