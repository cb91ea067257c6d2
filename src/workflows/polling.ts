/**
 * Polling schedules as pure functions (no Temporal import). Waiting is done by activity retry
 * policies: a not-ready observation fails, and the retry policy decides when to look again.
 */
import type { Capabilities } from '../providers/types';

export interface PollSchedule {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  /** The whole wait (schedule-to-close). */
  deadlineMs: number;
}

/**
 * Boot wait: look fast at first (a quarter of the cloud's poll interval), then back off to the
 * poll interval, so a quick boot is seen quickly and a slow one costs few API calls.
 */
export function bootPolling(caps: Pick<Capabilities, 'pollIntervalMs' | 'bootTimeoutMs' | 'typicalBootMs'>): PollSchedule {
  const initial = Math.max(100, Math.min(caps.pollIntervalMs, Math.round(caps.pollIntervalMs / 4)));
  return {
    initialIntervalMs: initial,
    backoffCoefficient: 1.5,
    maximumIntervalMs: Math.max(initial, caps.pollIntervalMs),
    deadlineMs: caps.bootTimeoutMs,
  };
}

/** SSH probe wait: sshd usually answers seconds after the instance is Running. */
export function sshPolling(caps: Pick<Capabilities, 'pollIntervalMs'>): PollSchedule {
  return { initialIntervalMs: 500, backoffCoefficient: 1.5, maximumIntervalMs: Math.max(2_000, Math.min(caps.pollIntervalMs, 10_000)), deadlineMs: 5 * 60_000 };
}

/** Wait for deleted instances to disappear. */
export function gonePolling(caps: Pick<Capabilities, 'pollIntervalMs'>): PollSchedule {
  return { initialIntervalMs: Math.max(100, Math.round(caps.pollIntervalMs / 2)), backoffCoefficient: 1.5, maximumIntervalMs: Math.max(1_000, caps.pollIntervalMs * 2), deadlineMs: 15 * 60_000 };
}
