/**
 * P3: boot detection lag and observe calls per minute per VM while waiting, for each boot
 * schedule. Every schedule gets the same boot durations (spread around the cloud's typical boot
 * time), its VMs launched at once on the FakeProvider registered for that schedule.
 */
import { startAttributes } from '../src/core/search-attributes';
import type { Client } from '@temporalio/client';
import { vmWorkflowId, teardownSignal } from '../src/core/api';
import type { vmWorkflow } from '../src/workflows';
import type { FakeProvider } from '../test/harness/fake-provider';
import { activityKnownAt, eventsOf } from './history';
import { sleep } from './stats';

export interface DetectionSample {
  bootMs: number;
  /** Instance Running (create + boot) → workflow task that sees awaitRunning's result. */
  lagMs: number;
  /** Observe calls for this VM after its create, up to its detection (the adopt check before create excluded). */
  observeCalls: number;
  waitMs: number;
  callsPerMinute: number;
}

/** Boot durations spread evenly over [0.7, 1.5] × typical (the same list for every schedule). */
export function bootDurations(typicalMs: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.round(typicalMs * (0.7 + (0.8 * i) / Math.max(1, n - 1))));
}

export async function measureDetection(client: Client, taskQueue: string, fake: FakeProvider, boots: number[], tag: string): Promise<DetectionSample[]> {
  const runs = await Promise.all(
    boots.map(async (bootMs, i) => {
      const name = `p3-${tag}-${i}`;
      const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
        taskQueue,
        workflowId: `${vmWorkflowId(name)}-${Date.now()}`,
        typedSearchAttributes: startAttributes(name),
        args: [{ spec: { name, clouds: [fake.name], k8s: 'off' }, tuning: { healthIntervalMs: 10 * 60_000 } }],
      });
      // The instance gets its own boot time as soon as it exists.
      for (;;) {
        const inst = fake.live(name)[0];
        if (inst) {
          inst.bootMs = bootMs;
          break;
        }
        await sleep(5);
      }
      return { name, h, bootMs };
    }),
  );
  const out: DetectionSample[] = [];
  for (const r of runs) {
    for (;;) {
      const events = await eventsOf(r.h);
      const known = activityKnownAt(events, 'awaitRunning');
      if (known !== undefined) {
        const inst = fake.live(r.name)[0]!;
        const runningAt = inst.createdAt + inst.bootMs;
        const observeCalls = fake.calls.filter((c) => c.primitive === 'observe' && c.vmName === r.name && c.at > inst.createdAt && c.at <= known).length;
        const waitMs = known - inst.createdAt;
        out.push({ bootMs: r.bootMs, lagMs: known - runningAt, observeCalls, waitMs, callsPerMinute: observeCalls / (waitMs / 60_000) });
        break;
      }
      await sleep(250);
    }
  }
  await Promise.all(
    runs.map(async (r) => {
      await r.h.signal(teardownSignal);
      await r.h.result();
    }),
  );
  return out;
}
