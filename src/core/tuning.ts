import { BOOT_INSTALL_MAX_WAIT_MS } from './boot-probe';

/** Timings of the lifecycle workflows. Defaults suit real clouds; tests and benchmarks shrink them. */
export interface Tuning extends K3sTuning {
  /** Attempts of a mutating cloud call (prepare/create/delete/cleanup) on Transient errors. */
  mutateMaxAttempts: number;
  /** First retry interval of mutating calls. */
  mutateInitialIntervalMs: number;
  /** Whole budget of one awaitGone during teardown. */
  goneDeadlineMs: number;
  /** First backoff of a leaked teardown (then doubling, capped at `leakMaxBackoffMs`). */
  leakBackoffMs: number;
  leakMaxBackoffMs: number;
  /**
   * How often a Ready VM observes itself: a backstop for a watcher that is down (the account watcher
   * sees every instance each look and notices a loss within seconds). 24 h: each check costs 11
   * history events and one observe, so an idle Ready VM stays within 20 events a VM-day.
   */
  healthIntervalMs: number;
  /** retryUntilUp: wait before re-planning when every offer is exhausted. */
  retryUntilUpDelayMs: number;
  /** Continue-as-new once the history has this many events (the server's suggestion also counts). */
  continueAsNewAfterEvents: number;
  /** `--recover`: relaunches of one VM after a loss before it stays `lost` (src/core/recovery.ts). */
  maxRecoveries: number;
  /** `spot: 'auto'`: this many preemptions within `spotAutoWindowMs` make the next launch on-demand only (src/core/recovery.ts). */
  spotAutoPreemptions: number;
  spotAutoWindowMs: number;
  /** How long the capacity memory keeps a preempted offer (its next plans try it last). */
  preemptedMemoryMs: number;
  /** A VM in a reservation's window starts its teardown this long before the window's `leaveBy` (src/core/reserved-window.ts). */
  reservedTeardownMarginMs: number;
  /** ...and is warned this long before that teardown. */
  reservedWarnLeadMs: number;
}

/** Timings of the k3s step (part of {@link Tuning}). */
export interface K3sTuning {
  /** Longest wait for a boot-time install before pushing the installer over SSH. */
  k3sBootMaxWaitMs: number;
  /** How often CheckBootInstall looks again while the boot install runs. */
  k3sProbeIntervalMs: number;
  /** Budget of one installer run over SSH. */
  k3sInstallTimeoutMs: number;
  /** Whole wait for `/readyz`. */
  k3sApiDeadlineMs: number;
  /** Whole wait for node Ready, CoreDNS and GPUs. */
  k3sValidateDeadlineMs: number;
}

export const DEFAULT_TUNING: Tuning = {
  mutateMaxAttempts: 8,
  mutateInitialIntervalMs: 2_000,
  goneDeadlineMs: 15 * 60_000,
  leakBackoffMs: 60_000,
  leakMaxBackoffMs: 30 * 60_000,
  healthIntervalMs: 24 * 60 * 60_000,
  retryUntilUpDelayMs: 30_000,
  continueAsNewAfterEvents: 4_000,
  maxRecoveries: 5,
  spotAutoPreemptions: 3,
  spotAutoWindowMs: 24 * 60 * 60_000,
  preemptedMemoryMs: 30 * 60_000,
  k3sBootMaxWaitMs: BOOT_INSTALL_MAX_WAIT_MS,
  k3sProbeIntervalMs: 15_000,
  k3sInstallTimeoutMs: 20 * 60_000,
  k3sApiDeadlineMs: 10 * 60_000,
  k3sValidateDeadlineMs: 10 * 60_000,
  // The teardown's own deadline (goneDeadlineMs) fits in the margin: nothing is billed after the window.
  reservedTeardownMarginMs: 20 * 60_000,
  reservedWarnLeadMs: 30 * 60_000,
};

export function withTuning(t?: Partial<Tuning>): Tuning {
  return { ...DEFAULT_TUNING, ...t };
}

/** Capped exponential backoff for leak retries. */
export function leakDelayMs(t: Tuning, tries: number): number {
  return Math.min(t.leakMaxBackoffMs, t.leakBackoffMs * 2 ** Math.max(0, tries - 1));
}
