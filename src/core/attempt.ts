/**
 * One launch attempt's end, judged: the record it leaves in the attempts table, the error kind it
 * counts as, and what the search does next. Shared by the serial and the hedged search
 * (src/workflows/launch.ts, hedged-launch.ts); pure, times passed in.
 *
 * | end                                  | outcome       | record kind  | compensate                         | next                |
 * |--------------------------------------|---------------|--------------|------------------------------------|---------------------|
 * | ok, and it wins                      | `ready`       | —            | none (it is the VM)                | done                |
 * | ok, but another attempt came first   | `cancelled`   | `Cancelled`  | full                               | continue            |
 * | cancelled (user, or a lost race)     | `cancelled`   | `Cancelled`  | cleanup in prepare, else full      | abort               |
 * | failed, `Unavailable`                | `unavailable` | `Unavailable`| `decide` (search.ts): cleanup      | `decide`            |
 * | failed, `BootFailed` failure type    | `failed`      | `BootFailed` | `decide`                           | `decide`            |
 * | failed, any other type               | `failed`      | its kind     | `decide`                           | `decide`            |
 *
 * The error kind is `kindOfFailureType(type)` (search.ts); an ok end counts as `Failed` where a kind is needed.
 * A failed end marked `released` (the create activity released its refused create itself) needs
 * no compensation step: {@link alreadyReleased}.
 */
import type { AttemptRecord, LaunchFailureDetails, LaunchResult } from './api';
import type { BlockScope, ErrorKind } from './errors';
import { FAILURE_TYPES, SDK_FAILURE_KINDS } from './failures';
import type { Capabilities, Offer, SpotMode } from './provider';
import { attemptsTable, decide, exhaustedKind, kindOfFailureType, type Decision, type Phase } from './search';

/** How one attempt ended. `createdAtMs`: workflow time of the create call (billing starts), when one was made. */
export type AttemptEnd = { createdAtMs?: number } & (
  | { ok: true; result: Omit<LaunchResult, 'attempts'> }
  | { ok: false; phase: Phase; type: string; message: string; block?: BlockScope; cancelled: boolean; instanceIds: string[]; released?: true }
);

export type FailedEnd = Extract<AttemptEnd, { ok: false }>;

/** How a launch search (serial or hedged) ended. */
export type LaunchOutcome =
  | { kind: 'ready'; result: LaunchResult; capabilities: Capabilities }
  | { kind: 'cancelled'; attempts: AttemptRecord[] }
  | { kind: 'failed'; details: LaunchFailureDetails; errorKind: string; message: string };

/** Where and when an attempt ran (ISO times of the workflow clock). */
export interface AttemptAt {
  index: number;
  offer: Offer;
  startedAt: string;
  endedAt: string;
}

/** An attempt that is over: its record (the search keeps it; compensation marks it), its kind and the decision. */
export interface JudgedAttempt {
  record: AttemptRecord;
  kind: ErrorKind;
  decision: Decision;
}

/** The part of the record every end has (a ready attempt's whole record). */
export function attemptRecord(at: AttemptAt, end: AttemptEnd): AttemptRecord {
  return {
    index: at.index,
    offer: at.offer,
    outcome: 'ready',
    instanceIds: end.ok ? [end.result.instanceId] : end.instanceIds,
    compensated: false,
    startedAt: at.startedAt,
    endedAt: at.endedAt,
    ...(end.createdAtMs !== undefined ? { createdAt: new Date(end.createdAtMs).toISOString() } : {}),
  };
}

/** A failed or cancelled attempt, judged by the table above. */
export function judgeFailure(at: AttemptAt, end: FailedEnd): JudgedAttempt {
  const kind = kindOfFailureType(end.type);
  const decision: Decision = end.cancelled ? { compensate: end.phase === 'prepare' ? 'cleanup' : 'full', next: 'abort' } : decide(kind, end.phase, end.block);
  const record: AttemptRecord = {
    ...attemptRecord(at, end),
    outcome: end.cancelled ? 'cancelled' : kind === 'Unavailable' ? 'unavailable' : 'failed',
    phase: end.phase,
    kind: end.cancelled ? SDK_FAILURE_KINDS.Cancelled : end.type === FAILURE_TYPES.BootFailed ? 'BootFailed' : kind,
    message: end.message,
    ...(decision.block ? { blocked: decision.block } : {}),
  };
  return { record, kind, decision };
}

/** The attempt's end says its create activity released everything already: the record is compensated, no step needed. */
export function alreadyReleased(end: AttemptEnd): boolean {
  return !end.ok && end.released === true;
}

/** A hedged attempt that reached Ready after another had won (`winner`: its index) or the launch stopped. */
export function judgeLost(at: AttemptAt, end: Extract<AttemptEnd, { ok: true }>, winner: number | undefined): JudgedAttempt {
  const record: AttemptRecord = {
    ...attemptRecord(at, end),
    outcome: 'cancelled',
    phase: 'connect',
    kind: SDK_FAILURE_KINDS.Cancelled,
    message: winner !== undefined ? `ready after attempt #${winner + 1} won` : 'cancelled',
  };
  return { record, kind: 'Failed', decision: { compensate: 'full', next: 'continue' } };
}

export function failedLaunch(reason: LaunchFailureDetails['reason'], errorKind: string, message: string, attempts: AttemptRecord[]): LaunchOutcome {
  return { kind: 'failed', details: { reason, attempts }, errorKind, message };
}

/** Every offer of the round was tried (and no retry-until-up); under `--spot` (only) the message says no spot offer is left. */
export function exhaustedLaunch(attempts: AttemptRecord[], spot?: SpotMode): LaunchOutcome {
  const lead = spot === 'only' ? 'no spot offer left (--spot auto goes on to on-demand): every spot offer' : 'every offer';
  return failedLaunch('exhausted', exhaustedKind(attempts), `${lead} was tried and failed:\n${attemptsTable(attempts)}`, attempts);
}
