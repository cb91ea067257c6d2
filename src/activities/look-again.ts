/**
 * Short waits inside one activity attempt. The Temporal server fires no activity retry sooner
 * than ~1 s after it is due (history.timerProcessorMaxTimeShift) and each retry costs a round
 * trip; so when the next look is due within a second or two, it is cheaper and faster to wait
 * here. Longer waits are left to the retry policy (the failure's `nextRetryDelay`), which keeps
 * a boot wait of many minutes from holding a worker slot.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { msOptionalToNumber } from '@temporalio/common/lib/time';
import { FAILURE_TYPES } from '../core/failures';

/** Looks due within this many ms are waited for in the activity. */
export const INLINE_MAX_DELAY_MS = 2_000;
/** No new look starts in the activity after this many ms (poll attempts time out at 20 s; an SSH probe try takes up to 10 s). */
export const INLINE_WINDOW_MS = 5_000;

export interface LookAgainOptions {
  /** Delay before the next look when the failure does not name one (default: 250 ms). */
  defaultDelayMs?: number;
  windowMs?: number;
  maxDelayMs?: number;
  /** Injected for tests; default: the activity context's cancellable sleep, else a timer. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const WAITING_TYPES: readonly string[] = [FAILURE_TYPES.NotReady, FAILURE_TYPES.SshNotReady, FAILURE_TYPES.SshAuthFailed];

function delayOf(f: ApplicationFailure, fallback: number): number {
  return msOptionalToNumber(f.nextRetryDelay ?? undefined) ?? fallback;
}

/** The activity's cancellable sleep, or a plain timer outside an activity. */
export function activitySleep(ms: number): Promise<void> {
  try {
    return Context.current().sleep(ms);
  } catch {
    return new Promise((r) => setTimeout(r, ms));
  }
}

/**
 * Run `look` until it returns. A retryable waiting failure (NotReady, SshNotReady, SshAuthFailed)
 * is looked at again in this attempt when its delay is short and the window allows; otherwise it
 * is thrown, for the retry policy to schedule the next look. Every other error is thrown at once.
 */
export async function lookAgain<T>(look: () => Promise<T>, o: LookAgainOptions = {}): Promise<T> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? activitySleep;
  const window = o.windowMs ?? INLINE_WINDOW_MS;
  const maxDelay = o.maxDelayMs ?? INLINE_MAX_DELAY_MS;
  const start = now();
  for (;;) {
    try {
      return await look();
    } catch (err) {
      if (!(err instanceof ApplicationFailure) || err.nonRetryable || !WAITING_TYPES.includes(err.type ?? '')) throw err;
      const delay = delayOf(err, o.defaultDelayMs ?? 250);
      if (delay > maxDelay || now() + delay - start > window) throw err;
      await sleep(delay);
    }
  }
}
