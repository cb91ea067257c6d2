/**
 * Why a Ready VM counts as lost, as a closed set (pure, no Temporal import). The account watcher
 * (src/core/watcher.ts) and the VM's backstop health check produce it; the `instanceLost` signal
 * and the status (`VmStatus.lossCause`, `RecoveryRecord.lastCause`) carry it; people read
 * {@link lossMessage}.
 *
 * | what the cloud lists for the VM's name            | kind        |
 * |---------------------------------------------------|-------------|
 * | nothing                                           | `vanished`  |
 * | an instance `Failed`                              | `failed`    |
 * | instances, none alive, none Failed (Stopped, …)   | `stopped`   |
 * | an instance the cloud announced it reclaims (spot) | `preempted` (with `noticeAt`, `deadline`) |
 *
 * A preemption is a loss at once, even while the instance still runs (`preemptedCauseOf`; the
 * account watcher's digest, src/core/watcher-digest.ts): its notice is the time a `--recover`
 * replacement has to start before the deadline (src/core/recovery.ts).
 */
import type { Observed } from './provider';

export const LOSS_KINDS = ['vanished', 'failed', 'stopped', 'preempted'] as const;
export type LossKind = (typeof LOSS_KINDS)[number];

/** Why a VM was lost. */
export interface LossCause {
  kind: LossKind;
  /** For people: the cloud's words (`i-1 is Failed (host error)`); absent: the kind's own sentence. */
  detail?: string;
  /** `preempted`: ISO 8601 time the cloud announced the reclaim (src/core/provider.ts `Preemption`). */
  noticeAt?: string;
  /** `preempted`: ISO 8601 time the cloud will stop or delete the instance, where it says. */
  deadline?: string;
}

const SENTENCE: Readonly<Record<LossKind, string>> = {
  vanished: 'the cloud no longer lists its instance',
  failed: 'its instance failed',
  stopped: 'its instance is not running',
  preempted: 'the spot market reclaimed its instance',
};

/** The detail of a loss the backstop health check (not the account watcher) found. */
export const BACKSTOP_DETAIL = 'the backstop health check saw the instance gone or not running';

/** `12:00:00` (UTC) of an ISO time; the text itself when it is not one. */
const clock = (iso: string): string => (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(iso) ? iso.slice(11, 19) : iso);

/**
 * The readable message of a cause (what the status, `list`, `explain` and the Web UI show); a
 * preemption says when: `preempted (notice 12:00:00, deadline 12:02:00)` (UTC), then the cloud's words.
 */
export function lossMessage(c: LossCause): string {
  if (c.kind !== 'preempted') return c.detail ?? SENTENCE[c.kind];
  const when = [c.noticeAt ? `notice ${clock(c.noticeAt)}` : '', c.deadline ? `deadline ${clock(c.deadline)}` : ''].filter(Boolean).join(', ');
  if (!when && !c.detail) return `preempted: ${SENTENCE.preempted}`;
  return `preempted${when ? ` (${when})` : ''}${c.detail ? `: ${c.detail}` : ''}`;
}

/**
 * The cause when the cloud announced a reclaim of one of `seen` (src/core/provider.ts
 * `Preemption`): `preempted`, with the earliest notice and its deadline; undefined when none.
 */
export function preemptedCauseOf(seen: readonly Pick<Observed, 'id' | 'preemption'>[]): LossCause | undefined {
  const hit = seen
    .filter((o) => o.preemption !== undefined)
    .sort((a, b) => (a.preemption!.noticeAt < b.preemption!.noticeAt ? -1 : a.preemption!.noticeAt > b.preemption!.noticeAt ? 1 : 0))[0];
  if (!hit?.preemption) return undefined;
  const p = hit.preemption;
  return {
    kind: 'preempted',
    noticeAt: p.noticeAt,
    ...(p.deadline ? { deadline: p.deadline } : {}),
    detail: `${hit.id}${p.detail ? ` ${p.detail}` : ' reclaimed by the cloud'}`,
  };
}

/** The cause, from what the cloud still lists for the VM's name (none of it alive). */
export function lossCauseOf(seen: readonly Pick<Observed, 'id' | 'status' | 'reason'>[]): LossCause {
  if (seen.length === 0) return { kind: 'vanished' };
  return {
    kind: seen.some((o) => o.status === 'Failed') ? 'failed' : 'stopped',
    detail: seen.map((o) => `${o.id} is ${o.status}${o.reason ? ` (${o.reason})` : ''}`).join('; '),
  };
}

export function isLossCause(v: unknown): v is LossCause {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as { kind?: unknown; detail?: unknown; noticeAt?: unknown; deadline?: unknown };
  const text = (x: unknown): boolean => x === undefined || typeof x === 'string';
  return (LOSS_KINDS as readonly unknown[]).includes(c.kind) && text(c.detail) && text(c.noticeAt) && text(c.deadline);
}

/**
 * The cause an `instanceLost` signal carries, of either shape: `cause` (current), or only the
 * free-text `reason` (signals sent before `cause` existed, kept in histories), read back by its
 * words; the text stays the detail, so the message shown is the one sent.
 */
export function causeOfSignal(l: { cause?: unknown; reason?: unknown }): LossCause {
  if (isLossCause(l.cause)) return l.cause;
  const text = typeof l.reason === 'string' && l.reason !== '' ? l.reason : SENTENCE.vanished;
  if (text === SENTENCE.vanished) return { kind: 'vanished' };
  if (/\bis (Stopping|Stopped|Terminating)\b/.test(text) && !/\bis Failed\b/.test(text)) return { kind: 'stopped', detail: text };
  return { kind: 'failed', detail: text };
}
