/**
 * Every activity option set of the workflows, in one place: typed proxies with their retry
 * policies. Non-retryable types come from the one failure vocabulary (src/core/failures.ts).
 */
import { ActivityCancellationType, proxyActivities, workflowInfo, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { NON_RETRYABLE_TYPES } from '../core/failures';
import type { PollSchedule } from '../core/polling';
import { cloudTaskQueue } from '../core/rate-limits';
import type { Tuning } from '../core/tuning';

/**
 * Every activity heartbeats while it runs (src/activities/liveness.ts), so a dead worker or a
 * completion lost in a server outage is noticed within this timeout, not the start-to-close one.
 */
export const HEARTBEAT_TIMEOUT = '15s';

/** A typed proxy with the heartbeat timeout every option set shares. */
function proxy(options: ActivityOptions): Activities {
  return proxyActivities<Activities>({ heartbeatTimeout: HEARTBEAT_TIMEOUT, ...options });
}

/**
 * The routing of cloud API calls: `options` on `cloud`'s task queue (`<this workflow's queue>-cloud-<cloud>`,
 * src/core/rate-limits.ts), which the worker polls with the cloud's activities-per-second limit.
 * Every activity that calls a cloud's API goes through here; SSH, k3s and bootstrap stay on the main queue.
 */
export function cloudActivities(cloud: string, options: ActivityOptions): Activities {
  return proxy({ ...options, taskQueue: cloudTaskQueue(workflowInfo().taskQueue, cloud) });
}

/** A proxy on `cloud`'s queue when one is named, else on the workflow's own. */
function routed(options: ActivityOptions, cloud: string | undefined): Activities {
  return cloud === undefined ? proxy(options) : cloudActivities(cloud, options);
}

function pollOptions(p: PollSchedule, summary: string): ActivityOptions {
  return {
    summary,
    // One attempt = a few looks within INLINE_WINDOW_MS (src/activities/look-again.ts) plus one
    // SSH probe try of up to 10 s: short, so a worker that dies mid-attempt costs seconds (the
    // server retries after this timeout), not the whole boot deadline.
    startToCloseTimeout: '20s',
    scheduleToCloseTimeout: p.deadlineMs,
    retry: {
      initialInterval: p.initialIntervalMs,
      backoffCoefficient: p.backoffCoefficient,
      maximumInterval: p.maximumIntervalMs,
      nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES],
    },
  };
}

/** A few retries on Transient, never a retry on a classified error. */
function fewRetries(t: Tuning): RetryPolicy {
  return {
    initialInterval: t.mutateInitialIntervalMs,
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: t.mutateMaxAttempts,
    nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES],
  };
}

/** Mutating cloud calls on `cloud`'s queue: a few retries on Transient, never retried on a classified error. */
export function mutating(t: Tuning, summary: string, cloud: string): Activities {
  return cloudActivities(cloud, {
    summary,
    startToCloseTimeout: '2 minutes',
    retry: fewRetries(t),
  });
}

/**
 * releaseAt: delete, wait until gone, clean up, in one attempt that heartbeats while it waits (a
 * dead worker is noticed within the heartbeat timeout). Transient errors get the mutating retries;
 * the gone wait's own deadline travels in the input.
 */
export function releasing(t: Tuning, summary: string, cloud: string): Activities {
  return cloudActivities(cloud, {
    summary,
    startToCloseTimeout: t.goneDeadlineMs + 2 * 60_000,
    retry: fewRetries(t),
  });
}

/** Waits done by retry (awaitRunning on `cloud`'s queue; probeSsh on the main queue: no `cloud`). */
export function polling(p: PollSchedule, summary: string, cloud?: string): Activities {
  return routed(pollOptions(p, summary), cloud);
}

/** Read-only calls (health observe on `cloud`'s queue; plan and the k3s boot script on the main queue: no `cloud`). */
export function reading(t: Tuning, summary: string, cloud?: string): Activities {
  return routed(
    {
      summary,
      startToCloseTimeout: '2 minutes',
      retry: fewRetries(t),
    },
    cloud,
  );
}

// ---- k3s step ----

/** The k3s activity gives up by itself at its deadline (naming what is missing); this is the backstop. */
const K3S_DEADLINE_MARGIN_MS = 60_000;

/** k3s waits done by retry (awaitApi, validateCluster), bounded by `deadlineMs`. */
export function k3sPolling(summary: string, deadlineMs: number): Activities {
  return proxy({
    summary,
    startToCloseTimeout: '2 minutes',
    scheduleToCloseTimeout: deadlineMs + K3S_DEADLINE_MARGIN_MS,
    retry: { initialInterval: 1_000, backoffCoefficient: 1.5, maximumInterval: 10_000, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] },
  });
}

/** The boot probe (CheckBootInstall): a few quick retries of one SSH round trip. */
export function k3sProbing(): Activities {
  return proxy({
    summary: 'k3s: boot probe',
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: 1_000, maximumInterval: 10_000, maximumAttempts: 10, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] },
  });
}

/** The installer pushed over SSH: its own budget, three tries. */
export function k3sInstalling(t: Pick<Tuning, 'k3sInstallTimeoutMs'>): Activities {
  return proxy({
    summary: 'k3s: run the installer over SSH',
    startToCloseTimeout: t.k3sInstallTimeoutMs,
    retry: { initialInterval: 5_000, maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] },
  });
}

// ---- fleet bootstrap ----

/** A fleet node's bootstrap step (verify, start, stop): `attempts` tries within `timeoutMs` each. */
export function bootstrapping(summary: string, timeoutMs: number, attempts: number): Activities {
  return proxy({
    summary,
    startToCloseTimeout: timeoutMs,
    retry: {
      initialInterval: 500,
      backoffCoefficient: 2,
      maximumInterval: 10_000,
      maximumAttempts: attempts,
      nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES],
    },
  });
}

/** Wait for a node's ready check, looking every `pollMs` until `deadlineMs`. */
export function bootstrapPolling(summary: string, deadlineMs: number, pollMs: number): Activities {
  return proxy({
    summary,
    startToCloseTimeout: 30_000,
    scheduleToCloseTimeout: deadlineMs,
    retry: { initialInterval: pollMs, backoffCoefficient: 1, maximumInterval: pollMs, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] },
  });
}

// ---- account watcher ----

/** The watcher's signal-with-start: a quick call, a few retries (the next cycle is the real retry). */
export function watching(summary: string): Activities {
  return proxy({
    summary,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 10_000, maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] },
  });
}

/**
 * The watcher's long-polling cycle: looks by itself for up to `windowMs`, heartbeating about every
 * half `heartbeatTimeoutMs` (not every look: heartbeats are billed actions). A nudge cancels it
 * (TRY_CANCEL: the workflow moves on at once; the activity stops at its next heartbeat).
 */
export function watchingLong(summary: string, windowMs: number, heartbeatTimeoutMs: number, cloud: string): Activities {
  return cloudActivities(cloud, {
    summary,
    startToCloseTimeout: windowMs + 60_000,
    heartbeatTimeout: heartbeatTimeoutMs,
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    retry: { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 10_000, maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] },
  });
}

/** Deleting an orphan (releaseAt: delete, wait gone, clean up) within `deadlineMs`; a failure is retried next cycle. */
export function sweeping(summary: string, deadlineMs: number, cloud: string): Activities {
  return cloudActivities(cloud, {
    summary,
    startToCloseTimeout: deadlineMs + 60_000,
    retry: { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 10_000, maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] },
  });
}
