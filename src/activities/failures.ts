import { ApplicationFailure } from '@temporalio/common';
import { isProviderError } from '../core/errors';
import { FAILURE_TYPES, type FailureDetails } from '../core/failures';

export type { FailureDetails } from '../core/failures';

/**
 * Translate whatever an adapter threw into an `ApplicationFailure` whose `type` is the error kind.
 * Only Transient is retryable; an unknown error is treated as Transient so that a bug or a
 * network blip is retried within the activity's budget, then surfaces as a failed attempt.
 */
export function toFailure(err: unknown, phase?: 'prepare'): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (isProviderError(err)) {
    const details: FailureDetails = { kind: err.kind, ...(phase ? { phase } : {}) };
    if (err.block) details.block = err.block;
    if (err.code) details.code = err.code;
    return ApplicationFailure.create({
      type: err.kind,
      message: err.message,
      nonRetryable: err.kind !== 'Transient',
      details: [details],
      ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.create({
    type: 'Transient',
    message,
    nonRetryable: false,
    details: [{ kind: 'Transient', ...(phase ? { phase } : {}) } satisfies FailureDetails],
  });
}

/** The cloud has not reached the wanted state yet: retried by the activity's retry policy (this is the polling). */
export function notReady(message: string, nextRetryDelayMs?: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.NotReady,
    message,
    nonRetryable: false,
    ...(nextRetryDelayMs !== undefined ? { nextRetryDelay: nextRetryDelayMs } : {}),
  });
}

/** The instance failed or vanished while booting. */
export function bootFailed(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FAILURE_TYPES.BootFailed, message, nonRetryable: true, details: [{ kind: 'Failed' } satisfies FailureDetails] });
}

/** Run an adapter call and translate its error. */
export async function translated<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toFailure(err);
  }
}
