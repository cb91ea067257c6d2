/**
 * Logs and metrics of the VM workflows, replay-safe: `log` and `metricMeter` of
 * @temporalio/workflow emit nothing while a history is replayed, and neither issues a command.
 * Every line names the VM, its cloud and the attempt where known (the worker's logger adds
 * the workflow id).
 */
import { log, metricMeter } from '@temporalio/workflow';
import type { LaunchResult, Stage, VmStatus } from '../core/api';
import { METRICS } from '../core/metrics';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** Stages of an attempt in flight: its number is one more than the attempts recorded. */
const IN_ATTEMPT: ReadonlySet<Stage> = new Set<Stage>(['preparing', 'creating', 'booting', 'connecting']);

/** What every VM line carries: name, cloud and the 1-based attempt of the offer being tried. */
function vmAttributes(s: VmStatus): Record<string, unknown> {
  return {
    vmName: s.name,
    ...(s.offer ? { cloud: s.offer.cloud } : {}),
    ...(IN_ATTEMPT.has(s.stage) ? { attempt: s.attempts.length + 1 } : s.attempts.length ? { attempt: s.attempts.length } : {}),
  };
}

/** A log line about the VM of `s` (replay-safe). */
export function vmLog(s: VmStatus, level: Level, message: string, extra: Record<string, unknown> = {}): void {
  log[level](message, { ...vmAttributes(s), ...extra });
}

/** A stage change: info, or warn when the VM is leaked, lost or failed (with the reason). */
export function logStage(s: VmStatus, from: Stage): void {
  if (s.stage === 'leaked')
    vmLog(s, 'warn', 'stage leaked: teardown failed, retrying (still billed)', {
      stage: s.stage,
      from,
      error: s.leak?.lastError,
      nextRetryAt: s.leak?.nextRetryAt,
    });
  else if (s.stage === 'failed' || s.stage === 'lost')
    vmLog(s, 'warn', `stage ${s.stage}`, { stage: s.stage, from, ...(s.error ? { error: `${s.error.kind}: ${s.error.message}` } : {}) });
  else vmLog(s, 'info', `stage ${s.stage}`, { stage: s.stage, from });
}

/** A launch ended: counted by outcome and cloud (the cloud it is up on, else the last one tried). */
export function countLaunch(s: VmStatus, outcome: 'ready' | 'failed' | 'cancelled', result?: LaunchResult): void {
  const cloud = result?.offer.cloud ?? s.attempts.at(-1)?.offer.cloud ?? 'none';
  metricMeter.createCounter(METRICS.launches, '1', 'VM launches ended, by outcome and cloud').add(1, { outcome, cloud });
}

/** An attempt failed and the search moves on (or ends): counted by error kind and cloud. */
export function countFailover(kind: string, cloud: string): void {
  metricMeter.createCounter(METRICS.failoverAttempts, '1', 'launch attempts that failed, by error kind and cloud').add(1, { kind, cloud });
}

/** The VM was handed over: seconds from the workflow's start. Only for stage `ready`. */
export function recordReady(s: VmStatus): void {
  if (s.stage !== 'ready' || !s.offer) return;
  const seconds = Math.max(0, (Date.now() - Date.parse(s.createdAt)) / 1_000);
  metricMeter.createHistogram(METRICS.timeToReady, 'float', 's', 'workflow start to Ready').record(seconds, { cloud: s.offer.cloud });
  vmLog(s, 'info', 'ready', { seconds, ...(s.endpoint ? { host: s.endpoint.host, port: s.endpoint.port } : {}) });
}

/** Nothing of the VM is billed any more: seconds since the teardown (or loss) began at `sinceMs`. */
export function recordGone(s: VmStatus, cloud: string, sinceMs: number): void {
  const seconds = Math.max(0, (Date.now() - sinceMs) / 1_000);
  metricMeter.createHistogram(METRICS.timeToGone, 'float', 's', 'teardown to nothing billed').record(seconds, { cloud });
  vmLog(s, 'info', 'gone: nothing is billed any more', { seconds });
}

/** A VM lost to a spot preemption: with a notice or not, and what `--recover` did next. */
export function countPreemption(s: VmStatus, notice: boolean, next: 'replace' | 'relaunch' | 'stay'): void {
  metricMeter
    .createCounter(METRICS.preemptions, '1', 'VMs lost to a spot preemption, and what --recover did')
    .add(1, { cloud: s.offer?.cloud ?? 'unknown', notice: notice ? 'yes' : 'no', next });
}
