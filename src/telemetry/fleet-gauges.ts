/**
 * The deployment-wide gauges, read from Temporal visibility rather than counted in workflows (a
 * count kept in worker memory would be wrong after any restart): every `intervalMs` the worker
 * lists the running VM workflows, counts them by stage (the GpuprovStage search attribute) and
 * sums the offer price of those that are up (read once per run through the status query). Every
 * worker reports the same values; aggregate across workers with max(), not sum().
 */
import type { Client } from '@temporalio/client';
import type { Logger, MetricMeter } from '@temporalio/common';
import { statusQuery, type Stage } from '../core/api';
import { METRICS } from '../core/metrics';
import { SA } from '../core/search-attributes';

/**
 * Stages of a running VM workflow as `GpuprovStage` indexes them, reported as 0 when none is in
 * them. An attempt's `booting` and `connecting` are indexed (and so counted) as `creating`.
 */
const RUNNING_STAGES: readonly Stage[] = [
  'pending',
  'planning',
  'preparing',
  'creating',
  'compensating',
  'waiting-retry',
  'waiting-window',
  'k8s',
  'ready',
  'k8s-failed',
  'tearing-down',
  'leaked',
  'lost',
];

/** Stages in which the VM is up and handed over: billed at its offer's price. */
const UP: ReadonlySet<string> = new Set<Stage>(['ready', 'k8s', 'k8s-failed']);

export interface FleetGaugesOptions {
  client: Client;
  meter: MetricMeter;
  intervalMs: number;
  log: Logger;
  /** How long one status query may take (a VM whose worker is gone does not answer). Default 5 s. */
  queryTimeoutMs?: number;
}

type Run = { workflowId: string; runId: string };

/** Running VM workflows counted by stage, and those that are up (billed). */
export async function countByStage(client: Client): Promise<{ byStage: Map<string, number>; up: Run[] }> {
  const byStage = new Map<string, number>(RUNNING_STAGES.map((s) => [s, 0]));
  const up: Run[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = 'vmWorkflow' AND ExecutionStatus = 'Running'` })) {
    const stage = wf.typedSearchAttributes.get(SA.stage) ?? 'pending';
    byStage.set(stage, (byStage.get(stage) ?? 0) + 1);
    if (UP.has(stage)) up.push({ workflowId: wf.workflowId, runId: wf.runId });
  }
  return { byStage, up };
}

/**
 * USD per hour of the runs in `up`, each price read once through the status query and cached in
 * `prices` by run id (an offer never changes within a run); a VM that does not answer counts 0
 * this time and is asked again next time.
 */
export async function spendPerHour(client: Client, up: readonly Run[], prices: Map<string, number>, queryTimeoutMs = 5_000): Promise<number> {
  const price = async (w: Run): Promise<number> => {
    const known = prices.get(w.runId);
    if (known !== undefined) return known;
    try {
      const s = await client.withDeadline(Date.now() + queryTimeoutMs, () => client.workflow.getHandle(w.workflowId, w.runId).query(statusQuery));
      const p = s.offer?.pricePerHour ?? 0;
      prices.set(w.runId, p);
      return p;
    } catch {
      return 0;
    }
  };
  const total = (await Promise.all(up.map(price))).reduce((a, b) => a + b, 0);
  const live = new Set(up.map((w) => w.runId));
  for (const runId of prices.keys()) if (!live.has(runId)) prices.delete(runId);
  return Math.round(total * 10_000) / 10_000;
}

/** Starts reporting `gpuprov_vms`, `gpuprov_vms_leaked` and `gpuprov_spend_per_hour_dollars`; `stop()` ends it. */
export function startFleetGauges(o: FleetGaugesOptions): { stop(): void } {
  const vms = o.meter.createGauge(METRICS.vms, 'int', '1', 'running VM workflows by stage (deployment-wide)');
  const leaked = o.meter.createGauge(METRICS.leaked, 'int', '1', 'VMs whose teardown failed and is being retried (still billed)');
  const spend = o.meter.createGauge(METRICS.spendPerHour, 'float', 'USD/h', 'sum of the offer prices of VMs that are up');
  const prices = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failing = false;
  const round = async (): Promise<void> => {
    try {
      const { byStage, up } = await countByStage(o.client);
      for (const [stage, n] of byStage) vms.set(n, { stage });
      leaked.set(byStage.get('leaked') ?? 0);
      // After the counts: a VM whose worker is gone makes its query wait for the timeout.
      spend.set(await spendPerHour(o.client, up, prices, o.queryTimeoutMs));
      if (failing) o.log.info('fleet gauges: visibility answers again');
      failing = false;
    } catch (err) {
      if (!failing && !stopped) o.log.warn('fleet gauges: could not list VM workflows; gauges keep their last values', { error: err });
      failing = true;
    }
    if (!stopped) timer = setTimeout(() => void round(), o.intervalMs).unref();
  };
  void round();
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
