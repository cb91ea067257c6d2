/** Typed activity proxies with the retry policies of DESIGN §3. Workflow-side only. */
import { proxyActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { NON_RETRYABLE_TYPES } from '../errors';
import type { PollSchedule } from './polling';
import type { Tuning } from './tuning';

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
  return { initialInterval: t.mutateInitialIntervalMs, backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: t.mutateMaxAttempts, nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES] };
}

/** Mutating cloud calls: a few retries on Transient, never retried on a classified error. */
export function mutating(t: Tuning, summary: string): Activities {
  return proxyActivities<Activities>({
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
export function releasing(t: Tuning, summary: string): Activities {
  return proxyActivities<Activities>({
    summary,
    startToCloseTimeout: t.goneDeadlineMs + 2 * 60_000,
    heartbeatTimeout: '30s',
    retry: fewRetries(t),
  });
}

/** Waits done by retry (awaitRunning, probeSsh, awaitGone). */
export function polling(p: PollSchedule, summary: string): Activities {
  return proxyActivities<Activities>(pollOptions(p, summary));
}

/** Read-only calls (plan, health observe). */
export function reading(t: Tuning, summary: string): Activities {
  return proxyActivities<Activities>({
    summary,
    startToCloseTimeout: '2 minutes',
    retry: fewRetries(t),
  });
}
