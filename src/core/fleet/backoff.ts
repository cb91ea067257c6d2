/** Per-slot restart backoff: exponential with a cap, jitter derived from the attempt (never a clock or RNG). */

export interface FleetTuning {
  /** First restart delay after a failed attempt. */
  backoffBaseMs: number;
  /** Largest restart delay. */
  backoffCapMs: number;
  /** Up to this fraction is taken off each delay, by a hash of the attempt. */
  jitter: number;
  /** Poll interval of the bootstrap ready check. */
  readyPollMs: number;
  /** Continue-as-new once the history has this many events (the server's suggestion also counts). */
  continueAsNewAfterEvents: number;
}

export const DEFAULT_FLEET_TUNING: FleetTuning = {
  backoffBaseMs: 1_000,
  backoffCapMs: 60_000,
  jitter: 0.2,
  readyPollMs: 1_000,
  continueAsNewAfterEvents: 4_000,
};

export function withFleetTuning(t?: Partial<FleetTuning>): FleetTuning {
  return { ...DEFAULT_FLEET_TUNING, ...t };
}

/** FNV-1a of the text, as a fraction in [0, 1). */
export function hashFraction(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h / 2 ** 32;
}

/** Delay before restarting `slot` after `failures` consecutive failures (≥ 1), for the attempt that failed. */
export function backoffMs(t: FleetTuning, failures: number, slot: string, attempt: number): number {
  const n = Math.max(1, Math.min(failures, 40));
  const raw = Math.min(t.backoffCapMs, t.backoffBaseMs * 2 ** (n - 1));
  return Math.round(raw * (1 - t.jitter * hashFraction(`${slot}#${attempt}`)));
}
