/**
 * Polling schedules as pure functions (no Temporal import). Waiting is done by activity retry
 * policies: a not-ready observation fails, and the retry policy decides when to look again.
 */
import type { Capabilities } from './provider';

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

/**
 * Dense boot polling: how often to look while a boot is likely to finish. Hazard: the Temporal
 * server fires no timer or retry sooner than ~1 s (history.timerProcessorMaxTimeShift), so
 * shorter delays buy nothing.
 */
export const DENSE_BOOT_POLL_MS = 1_500;
/** The dense window, as fractions of the cloud's typical boot time. */
export const DENSE_WINDOW = { from: 0.6, to: 1.5 } as const;

/**
 * Boot-aware delay before the next boot observation, from the time since create (meant as a
 * NotReady failure's `nextRetryDelay`, which overrides the retry policy's backoff). Sparse (the
 * cloud's poll interval) while the boot cannot be done yet, dense through the window where boots
 * usually finish, then backing off linearly to the poll interval again for slow boots. Never
 * slower than the poll interval, never faster than 100 ms.
 */
export function bootPollDelayMs(caps: Pick<Capabilities, 'pollIntervalMs' | 'typicalBootMs'>, elapsedMs: number): number {
  const poll = Math.max(100, caps.pollIntervalMs);
  const dense = Math.max(100, Math.min(DENSE_BOOT_POLL_MS, poll));
  const from = caps.typicalBootMs * DENSE_WINDOW.from;
  const to = caps.typicalBootMs * DENSE_WINDOW.to;
  if (elapsedMs < from) return Math.round(Math.max(dense, Math.min(poll, from - elapsedMs)));
  if (elapsedMs <= to) return dense;
  return Math.round(Math.min(poll, dense + (elapsedMs - to) / 4));
}
