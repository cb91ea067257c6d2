/**
 * P5: a plan of 10 offers whose first 9 answer Capacity on create: orchestration time from the
 * workflow's start to the 10th create call (and the history events it cost, for P2).
 */
import { startAttributes } from '../src/core/search-attributes';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { capacityMemoryWorkflowId } from '../src/core/capacity-memory';
import type { Offer } from '../src/core/provider';
import { teardownSignal, vmWorkflowId } from '../src/core/api';
import type { vmWorkflow } from '../src/workflows';
import type { FakeProvider } from '../test/harness/fake-provider';
import { eventsOf, readyIndex, type HistoryEvent } from './history';
import { sleep } from './stats';

export const FAILOVER_OFFERS = 10;

export function failoverOffers(cloud: string): Offer[] {
  return Array.from({ length: FAILOVER_OFFERS }, (_, i) => ({
    cloud,
    region: `r${i}`,
    instanceType: `gpu-${i}`,
    gpu: { model: 'H100', count: 1 },
    pricePerHour: 1 + i / 10,
    currency: 'USD',
  }));
}

/** Empty the deployment's capacity memory (a fresh start for a run that needs every Capacity answer). */
export async function forgetCapacity(client: Client, taskQueue: string): Promise<void> {
  try {
    await client.workflow.getHandle(capacityMemoryWorkflowId(taskQueue)).terminate('bench: start without a capacity memory');
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

export interface FailoverRun {
  /** Workflow start → 10th create call. */
  toTenthCreateMs: number;
  /** 1st create → 10th create: the 9 failed attempts (prepare, create, compensation) alone. */
  perAttemptMs: number;
  eventsToReady: number;
  events: HistoryEvent[];
}

export async function failoverRun(client: Client, taskQueue: string, fake: FakeProvider, i: number): Promise<FailoverRun> {
  const name = `p5-${i}`;
  fake.clearRules();
  await forgetCapacity(client, taskQueue); // every run fails over through all 9 (P8 measures the memory)
  fake.script(
    ...Array.from({ length: FAILOVER_OFFERS - 1 }, (_, k) => ({ primitive: 'create' as const, region: `r${k}`, error: 'Capacity' as const, times: -1 })),
  );
  const t0 = Date.now();
  const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
    taskQueue,
    workflowId: `${vmWorkflowId(name)}-${t0}`,
    typedSearchAttributes: startAttributes(name),
    args: [{ spec: { name, clouds: [fake.name], k8s: 'off' }, tuning: { healthIntervalMs: 10 * 60_000 } }],
  });
  let events: HistoryEvent[] = [];
  for (let tries = 0; tries < 600; tries++) {
    events = await eventsOf(h);
    if (readyIndex(events) >= 0) break;
    await sleep(100);
  }
  const ri = readyIndex(events);
  const creates = fake.calls.filter((c) => c.primitive === 'create' && c.vmName === name);
  if (ri < 0 || creates.length !== FAILOVER_OFFERS) throw new Error(`P5 run ${name}: ${creates.length} creates, ready=${ri >= 0}`);
  await h.signal(teardownSignal);
  await h.result();
  return { toTenthCreateMs: creates[9]!.at - t0, perAttemptMs: (creates[9]!.at - creates[0]!.at) / (FAILOVER_OFFERS - 1), eventsToReady: ri + 1, events };
}
