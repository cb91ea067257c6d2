/**
 * gpuprov's own metrics, by name: the one vocabulary the workflows (replay-safe `metricMeter`),
 * the worker's collector (src/telemetry) and README's table share. All appear on the worker's
 * Prometheus endpoint (GPUPROV_METRICS_ADDRESS) beside the SDK's `temporal_*` series.
 */

export const METRICS = {
  /** Counter {outcome: ready|failed|cancelled, cloud}: launches ended, by how. */
  launches: 'gpuprov_launches_total',
  /** Counter {kind, cloud}: attempts that failed and were compensated before the next offer. */
  failoverAttempts: 'gpuprov_failover_attempts_total',
  /** Histogram {cloud}, seconds: workflow start to Ready. */
  timeToReady: 'gpuprov_time_to_ready_seconds',
  /** Histogram {cloud}, seconds: teardown (or loss) to nothing billed. */
  timeToGone: 'gpuprov_time_to_gone_seconds',
  /** Gauge {stage}: running VM workflows by stage (deployment-wide, from visibility). */
  vms: 'gpuprov_vms',
  /** Gauge: VMs whose teardown failed and is being retried (still billed). */
  leaked: 'gpuprov_vms_leaked',
  /** Gauge, USD per hour: sum of the offer prices of VMs that are up (ready, k8s, k8s-failed). */
  spendPerHour: 'gpuprov_spend_per_hour_dollars',
  /** Counter {cloud}: orphaned instances deleted by the account watcher (src/workflows/watcher.ts). */
  orphansSwept: 'gpuprov_orphans_swept_total',
  /** Counter {cloud, notice: yes|no, next: replace|relaunch|stay}: VMs lost to a spot preemption, and what `--recover` did. */
  preemptions: 'gpuprov_preemptions_total',
} as const;

/** Bucket bounds (seconds) of the two duration histograms: boots take seconds to tens of minutes. */
export const DURATION_BUCKETS_S: readonly number[] = [5, 10, 20, 30, 60, 120, 180, 300, 600, 900, 1_800, 3_600];
