/** Reading Temporal failures in workflow code: by `type` and details, never by message text. */
import { ActivityFailure, ApplicationFailure, TimeoutFailure, isCancellation } from '@temporalio/workflow';
import type { BlockScope } from '../core/errors';
import { BLOCK_SCOPES } from '../core/errors';
import { isFailureType, SDK_FAILURE_KINDS, type FailureKind } from '../core/failures';

export interface FailureInfo {
  /** The ApplicationFailure's type when it is in the vocabulary (src/core/failures.ts), else the SDK's kind. */
  type: FailureKind;
  message: string;
  block?: BlockScope;
  cancelled: boolean;
  /** Set by a multi-step activity whose first step failed (`prepare`: nothing was created). */
  phase?: 'prepare';
  /** The create activity released what its refused create may have made: nothing to compensate. */
  released?: true;
}

export function failureInfo(err: unknown): FailureInfo {
  if (isCancellation(err)) return { type: SDK_FAILURE_KINDS.Cancelled, message: 'cancelled', cancelled: true };
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const d = cause.details?.[0] as { block?: unknown; phase?: unknown; released?: unknown } | undefined;
    const block = BLOCK_SCOPES.find((s) => s === d?.block);
    return {
      type: isFailureType(cause.type) ? cause.type : SDK_FAILURE_KINDS.Error,
      message: cause.message,
      cancelled: false,
      ...(block ? { block } : {}),
      ...(d?.phase === 'prepare' ? { phase: 'prepare' as const } : {}),
      ...(d?.released === true ? { released: true as const } : {}),
    };
  }
  if (cause instanceof TimeoutFailure) {
    // A poll that timed out carries the last not-ready failure as its cause.
    const last = cause.cause instanceof ApplicationFailure ? `: last seen ${cause.cause.message}` : '';
    return { type: SDK_FAILURE_KINDS.Timeout, message: `timed out (${cause.timeoutType})${last}`, cancelled: false };
  }
  return { type: SDK_FAILURE_KINDS.Error, message: err instanceof Error ? err.message : String(err), cancelled: false };
}

export function failureMessage(err: unknown): string {
  return failureInfo(err).message;
}
