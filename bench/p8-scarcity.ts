/**
 * P8 scarcity: 10 offers in 10 regions on a fake cloud, the first 9 answering Capacity; 20
 * launches one after another. Launch 1 fails over through the 9; the deployment's capacity memory
 * (src/core/capacity-memory.ts) makes launches 2–20 try those 9 last, so they should take about
 * as long as a launch whose plan holds only the good offer (the baseline, interleaved with them).
 * Time to Ready = the VM's `readyAt − createdAt` (workflow time: no polling error).
 *
 * Second half ({@link hedgedRuns}): launch 1 again (capacity memory emptied) with every create
 * answer taking {@link SLOW_ANSWER_MS} (the fake cloud's `create` delay: the 9 Capacity answers and
 * the good one), serial vs `--parallel 3` (src/workflows/hedged-launch.ts), on a fake cloud named
 * `fake`: the one whose hedge lanes are regions (`laneOf` in src/core/hedge.ts). Under any other
 * name one attempt holds the whole cloud, and `--parallel 3` takes as long as serial.
 */
import type { Client } from '@temporalio/client';
import { statusQuery, teardownSignal, vmWorkflowId } from '../src/core/api';
import { startAttributes } from '../src/core/search-attributes';
import type { vmWorkflow } from '../src/workflows';
import type { FakeProvider } from '../test/harness/fake-provider';
import { failoverOffers, FAILOVER_OFFERS, forgetCapacity } from './p5-failover';
import { sleep } from './stats';

export const P8_LAUNCHES = 20;

export interface ScarcityLaunch {
  timeToReadyMs: number;
  creates: number;
}

async function launch(client: Client, taskQueue: string, fake: FakeProvider, name: string, regions?: string[], parallel?: number): Promise<ScarcityLaunch> {
  const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
    taskQueue,
    workflowId: `${vmWorkflowId(name)}-${Date.now()}`,
    typedSearchAttributes: startAttributes(name),
    args: [
      {
        spec: { name, clouds: [fake.name], k8s: 'off', ...(regions ? { regions } : {}), ...(parallel ? { parallel } : {}) },
        tuning: { healthIntervalMs: 10 * 60_000 },
      },
    ],
  });
  for (let tries = 0; tries < 1_200; tries++) {
    const s = await h.query(statusQuery).catch(() => undefined);
    if (s?.stage === 'failed') throw new Error(`P8 ${name} failed: ${s.error?.message ?? '?'}`);
    if (s?.stage === 'ready' && s.readyAt) {
      await h.signal(teardownSignal);
      await h.result();
      const creates = fake.calls.filter((c) => c.primitive === 'create' && c.vmName === name).length;
      return { timeToReadyMs: Date.parse(s.readyAt) - Date.parse(s.createdAt), creates };
    }
    await sleep(50);
  }
  throw new Error(`P8 ${name}: not ready`);
}

/** The offers of P8, the first 9 answering Capacity on every create. */
function scarce(fake: FakeProvider): void {
  fake.setOffers(failoverOffers(fake.name));
  fake.clearRules();
  fake.script(
    ...Array.from({ length: FAILOVER_OFFERS - 1 }, (_, k) => ({ primitive: 'create' as const, region: `r${k}`, error: 'Capacity' as const, times: -1 })),
  );
}

/** Launch 1, launches 2..`n`, and `baselineN` launches whose plan holds only the good offer. */
export async function scarcityRuns(
  client: Client,
  taskQueue: string,
  fake: FakeProvider,
  n = P8_LAUNCHES,
  baselineN = 5,
): Promise<{ first: ScarcityLaunch; rest: ScarcityLaunch[]; baseline: ScarcityLaunch[] }> {
  scarce(fake);
  await forgetCapacity(client, taskQueue);
  const runs: ScarcityLaunch[] = [];
  const baseline: ScarcityLaunch[] = [];
  // The baseline is interleaved with launches 2..n (every (n-1)/baselineN-th), so both see the same machine load.
  const every = Math.max(1, Math.floor((n - 1) / baselineN));
  for (let i = 0; i < n; i++) {
    runs.push(await launch(client, taskQueue, fake, `p8-${i}`));
    if (i > 0 && i % every === 0 && baseline.length < baselineN)
      baseline.push(await launch(client, taskQueue, fake, `p8-base-${baseline.length}`, [`r${FAILOVER_OFFERS - 1}`]));
  }
  const [first, ...rest] = runs;
  return { first: first!, rest, baseline };
}

/** How long each create answer of the hedged half takes (Capacity or not). */
export const SLOW_ANSWER_MS = 5_000;
export const P8_PARALLEL = 3;

/**
 * Launch 1 on the 10 scarce offers with slow create answers, serial and with `--parallel 3`, each
 * from an empty capacity memory. The fake's create delay is reset afterwards.
 */
export async function hedgedRuns(client: Client, taskQueue: string, fake: FakeProvider): Promise<{ serial: ScarcityLaunch; parallel: ScarcityLaunch }> {
  scarce(fake);
  fake.setDelay('create', SLOW_ANSWER_MS);
  try {
    await forgetCapacity(client, taskQueue);
    const serial = await launch(client, taskQueue, fake, 'p8-serial');
    await forgetCapacity(client, taskQueue);
    const parallel = await launch(client, taskQueue, fake, 'p8-par3', undefined, P8_PARALLEL);
    return { serial, parallel };
  } finally {
    fake.setDelay('create', 0);
  }
}
