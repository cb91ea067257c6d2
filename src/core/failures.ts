/**
 * The one failure vocabulary: every `ApplicationFailure.type` gpuprov throws, declared once as a
 * closed set. Activities throw these types, workflows branch on them (never on message text),
 * and the retry policies' non-retryable lists are derived from here. No Temporal import.
 */
import { ERROR_KINDS, type BlockScope, type ErrorKind } from './errors';

/** Failure types beyond the provider error kinds, each with whether Temporal may retry it. */
const OTHER_TYPES = {
  /** A wait that has not reached its state yet (the activity's retry policy is the polling). */
  NotReady: { retryable: true },
  /** The instance failed or vanished while booting. */
  BootFailed: { retryable: false },
  /** SSH does not answer yet (connection refused, timeout, banner not yet sent). */
  SshNotReady: { retryable: true },
  /** SSH answered but refused the worker's key (retryable: cloud-init may not have installed it yet). */
  SshAuthFailed: { retryable: true },
  /** The VM presented another host key than the one pinned at launch: never retried. */
  HostKeyMismatch: { retryable: false },
  /** This worker's SSH key is not the deployment key the VM was created with: workers must share one key. */
  WorkerKeyMismatch: { retryable: false },
  /** A remote command that must succeed exited non-zero (the probe's `true`, a bootstrap verify). */
  CommandFailed: { retryable: false },
  /** The k3s installer ran and exited non-zero (retried a few times by its proxy). */
  K3sInstallFailed: { retryable: true },
  /** k3s validation still failed at its deadline (the message names what is missing). */
  K3sInvalid: { retryable: false },
  /** A fleet node's bootstrap failed (verify exited non-zero, the start command died, timed out). */
  BootstrapFailed: { retryable: false },
  /** vmWorkflow / launchWorkflow: every offer failed, or a fatal kind ended the search. */
  LaunchFailed: { retryable: false },
  /** launchWorkflow: the launch was cancelled; every attempt was compensated. */
  LaunchCancelled: { retryable: false },
} as const;

export type FailureType = ErrorKind | keyof typeof OTHER_TYPES;

/** Every failure type, by name: `FAILURE_TYPES.NotReady === 'NotReady'`. */
export const FAILURE_TYPES: { readonly [K in FailureType]: K } = Object.freeze(
  Object.fromEntries([...ERROR_KINDS, ...Object.keys(OTHER_TYPES)].map((k) => [k, k])) as { [K in FailureType]: K },
);

/** Whether Temporal may retry an activity that failed with this type. Of the kinds only Transient is. */
export function isRetryableType(type: FailureType): boolean {
  return type in OTHER_TYPES ? OTHER_TYPES[type as keyof typeof OTHER_TYPES].retryable : type === 'Transient';
}

/** Activity failure types that Temporal must not retry: derived from the set above. */
export const NON_RETRYABLE_TYPES: readonly FailureType[] = (Object.keys(FAILURE_TYPES) as FailureType[]).filter((t) => !isRetryableType(t));

export function isFailureType(s: unknown): s is FailureType {
  return typeof s === 'string' && Object.prototype.hasOwnProperty.call(FAILURE_TYPES, s);
}

/**
 * What workflow code reads the SDK's own failures as (src/workflows/failure-info.ts); gpuprov
 * never throws these: `Cancelled` (a cancellation), `Timeout` (an activity or poll timed out),
 * `Error` (anything else outside the vocabulary above).
 */
export const SDK_FAILURE_KINDS = Object.freeze({ Cancelled: 'Cancelled', Timeout: 'Timeout', Error: 'Error' } as const);
export type SdkFailureKind = (typeof SDK_FAILURE_KINDS)[keyof typeof SDK_FAILURE_KINDS];

/** A failure as workflow code reads it: a gpuprov failure type, or one of the SDK's kinds. */
export type FailureKind = FailureType | SdkFailureKind;

/** An attempt record's `kind`: the provider kind it counted as, `BootFailed`, or `Cancelled`. */
export type AttemptKind = ErrorKind | typeof FAILURE_TYPES.BootFailed | typeof SDK_FAILURE_KINDS.Cancelled;

/**
 * Details carried as the first detail of every activity → workflow failure (read by
 * `failureInfo` in workflows; never the message text).
 */
export interface FailureDetails {
  /** The provider error kind this failure counts as in the failover search. */
  kind: ErrorKind;
  block?: BlockScope;
  /** Vendor error code or HTTP status, for humans and tests. */
  code?: string;
  /** The step of a multi-step activity that failed (`prepare`: nothing can have been created). */
  phase?: 'prepare';
  /** The create activity released what the refused create may have made (src/activities/attempt.ts): nothing is left to compensate. */
  released?: true;
}
