/**
 * The one SSH error and its one mapping to an activity failure. A command that ran and exited
 * non-zero is not an SshError: the caller decides what its exit code means.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, isRetryableType, type FailureDetails, type FailureType } from '../core/failures';

/**
 * - `unreachable`: no SSH session (refused, timed out, closed before login, lost mid-command).
 * - `auth`: sshd answered and refused the key.
 * - `host-key-mismatch`: the host presented another key than the one pinned at launch.
 * - `worker-key-mismatch`: this worker's key is not the one the VM was created with (found
 *   before connecting: see `requireWorkerKey`).
 */
export type SshErrorReason = 'unreachable' | 'auth' | 'host-key-mismatch' | 'worker-key-mismatch';

export class SshError extends Error {
  constructor(
    readonly reason: SshErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'SshError';
  }
}

/** One failure type per reason; retryability comes from the failure vocabulary. */
const FAILURE_OF_REASON: { readonly [R in SshErrorReason]: FailureType } = {
  unreachable: FAILURE_TYPES.SshNotReady,
  // Retryable: cloud-init may not have installed the worker's key yet.
  auth: FAILURE_TYPES.SshAuthFailed,
  'host-key-mismatch': FAILURE_TYPES.HostKeyMismatch,
  'worker-key-mismatch': FAILURE_TYPES.WorkerKeyMismatch,
};

/** The activity failure for an SshError (every activity that uses SSH throws this). */
export function sshFailure(err: SshError): ApplicationFailure {
  const type = FAILURE_OF_REASON[err.reason];
  return ApplicationFailure.create({
    type,
    message: err.message,
    nonRetryable: !isRetryableType(type),
    details: [{ kind: 'Failed' } satisfies FailureDetails],
  });
}

/** For `.catch`: an SshError is thrown as its failure, anything else unchanged. */
export function throwSshFailure(err: unknown): never {
  throw err instanceof SshError ? sshFailure(err) : err;
}
