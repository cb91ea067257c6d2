/**
 * P6: VM ready → cluster ready on the simulated k3s host (test/k3s/sim: the real installer script
 * with its download step overridden, a k3s double serving the API): boot-installed (the cloud ran
 * the installer as its boot script) vs a forced SSH push (a cloud without boot scripts).
 * Measured from the workflow's `k8s` stage upsert to its `ready` upsert in history.
 */
import { startAttributes } from '../src/core/search-attributes';
import type { Client } from '@temporalio/client';
import { teardownSignal, vmWorkflowId } from '../src/core/api';
import type { vmWorkflow } from '../src/workflows';
import type { K3sTuning } from '../src/core/tuning';
import type { Tuning } from '../src/core/tuning';
import type { SimulatedK3sCloud } from '../test/k3s/sim/simulated-cloud';
import { eventsOf, timeOf, upsertedStage, type HistoryEvent } from './history';
import { sleep } from './stats';

/** Short k3s waits, as in the k3s tests (the simulated host answers in seconds). */
export const P6_TUNING: K3sTuning = {
  k3sBootMaxWaitMs: 30_000,
  k3sProbeIntervalMs: 300,
  k3sInstallTimeoutMs: 60_000,
  k3sApiDeadlineMs: 20_000,
  k3sValidateDeadlineMs: 20_000,
};

export interface K3sRun {
  route: 'boot' | 'push';
  /** `k8s` stage → `ready`. */
  clusterMs: number;
  /** Workflow start → `ready` (launch included). */
  totalMs: number;
}

export async function k3sRun(client: Client, taskQueue: string, cloud: SimulatedK3sCloud, route: 'boot' | 'push', i: number): Promise<K3sRun> {
  const name = `p6${route}${i}`;
  cloud.host(name, { boot: 'normal' });
  const tuning: Partial<Tuning> & K3sTuning = { healthIntervalMs: 10 * 60_000, mutateInitialIntervalMs: 200, ...P6_TUNING };
  const t0 = Date.now();
  const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
    taskQueue,
    workflowId: `${vmWorkflowId(name)}-${t0}`,
    typedSearchAttributes: startAttributes(name),
    args: [{ spec: { name, clouds: [cloud.name] }, tuning }],
  });
  let events: HistoryEvent[] = [];
  for (let tries = 0; tries < 1_200; tries++) {
    events = await eventsOf(h);
    if (events.some((e) => ['ready', 'k8s-failed', 'failed'].includes(upsertedStage(e) ?? ''))) break;
    await sleep(100);
  }
  const k8s = events.find((e) => upsertedStage(e) === 'k8s');
  const ready = events.find((e) => upsertedStage(e) === 'ready');
  await h.signal(teardownSignal);
  await h.result();
  if (!k8s || !ready) throw new Error(`P6 ${name}: did not reach ready through k8s (${events.map(upsertedStage).filter(Boolean).join(' → ')})`);
  return { route, clusterMs: timeOf(ready) - timeOf(k8s), totalMs: timeOf(ready) - t0 };
}
