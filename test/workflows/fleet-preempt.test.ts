/**
 * A fleet's spot slot preempted with a notice (FakeProvider, the real account watcher): the slot's
 * child replaces its instance itself before the deadline, under the same attempt (src/core/recovery.ts,
 * the fleet-slot row), and the fleet takes the new endpoint (src/core/fleet/fold.ts, `vmReady` on an
 * `up` slot); never more than two billed instances of the slot. Without a notice the fleet replaces
 * the lost slot with a new attempt, as before.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusQuery } from '../../src/core/api';
import { fleetTeardownSignal } from '../../src/core/fleet-api';
import type { fleetWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, testEnv } from '../harness/temporal';
import { waitFleet } from './helpers';
import { QUIET, sampleBilled, startWatchedFake, type WatchedFake } from './watched-fake';

const LOOK_MS = 300;

describe.skipIf(!requireServer())('a fleet spot slot preempted (FakeProvider, account watcher)', () => {
  const fake = new FakeProvider({ spot: { priceFactor: 0.4 } });
  let lab: WatchedFake;
  const fleets: WorkflowHandle[] = [];

  beforeAll(async () => {
    lab = await startWatchedFake(fake, 'test-fleet-preempt', {
      fastIntervalMs: LOOK_MS,
      readyIntervalMs: LOOK_MS,
      slowIntervalMs: 2_000,
      heartbeatTimeoutMs: 6_000,
    });
  });
  afterAll(async () => {
    for (const h of fleets) {
      await h.signal(fleetTeardownSignal).catch(() => undefined);
      await h.result().catch(() => undefined);
    }
    await lab?.stop();
  });

  async function startFleet(): Promise<{ h: WorkflowHandle<typeof fleetWorkflow>; slot: string }> {
    const name = `fp${randomUUID().slice(0, 6)}`;
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
      taskQueue: lab.worker.taskQueue,
      workflowId: `fleet-${name}`,
      args: [
        {
          shape: { name, generation: 1, groups: [{ id: 'gpu', role: 'gpu', count: 1, vm: { clouds: ['fake'], k8s: 'off', spot: 'only' } }] },
          tuning: { backoffBaseMs: 200, backoffCapMs: 400, readyPollMs: 200 },
          vmTuning: QUIET,
        },
      ],
    });
    fleets.push(h);
    return { h, slot: `${name}-gpu-0` };
  }

  it('with a notice: the same attempt replaces its instance before the deadline; the fleet follows the new endpoint', async () => {
    fake.setBootMs(0);
    const { h, slot } = await startFleet();
    const first = await waitFleet(h, (s) => s.slots[0]?.ready === true, 'the slot ready');
    const oldEndpoint = first.slots[0]!.endpoint!;
    const [old] = fake.live(slot);
    expect(old).toBeDefined();
    fake.setBootMs(1_000);
    const billed = sampleBilled(fake, slot);
    const notice = fake.preempt(old!.id, { noticeMs: 25_000 })!;
    const after = await waitFleet(h, (s) => s.slots[0]?.ready === true && s.slots[0]?.endpoint?.port !== oldEndpoint.port, 'the slot ready on a new endpoint');
    await waitFleet(h, () => !fake.live(slot).some((i) => i.id === old!.id), 'the preempted instance deleted');
    expect(billed.stop()).toBeLessThanOrEqual(2);
    expect(after.slots[0]).toMatchObject({ slot, attempt: 1 });
    const creates = fake.callsOf('create').filter((c) => c.vmName === slot);
    expect(creates).toHaveLength(2);
    expect(creates[1]!.at).toBeLessThan(Date.parse(notice.deadline!));
    const client = await testEnv().client();
    const vm = await client.workflow.getHandle(after.slots[0]!.workflowId).query(statusQuery);
    expect(vm.recovered).toMatchObject({ count: 1, lastCause: { kind: 'preempted', deadline: notice.deadline } });
    expect(fake.live(slot).map((i) => i.id)).toEqual(vm.instanceIds);
  });

  it('without a notice: the fleet replaces the lost slot with a new attempt', async () => {
    fake.setBootMs(0);
    const { h, slot } = await startFleet();
    await waitFleet(h, (s) => s.slots[0]?.ready === true, 'the slot ready');
    const [old] = fake.live(slot);
    fake.preempt(old!.id);
    const after = await waitFleet(h, (s) => s.slots[0]?.ready === true && s.slots[0].attempt > 1, 'a new attempt ready');
    expect(after.slots[0]!.slot).toBe(slot);
    expect(fake.live(slot)).toHaveLength(1);
  });
});
