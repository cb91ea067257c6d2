/**
 * `budgetUsd` inside a fleet (FakeProvider, dev server): each slot's VM is torn down when its own
 * spend reaches the budget, after the 80 % warning. The slot is then held, not replaced: a
 * replacement would spend the same budget again, in a loop. Changing the group's template (a
 * new budget, a new generation) starts a fresh attempt.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VmStatus } from '../../src/core/api';
import { applyShapeUpdate, fleetStatusQuery, fleetTeardownSignal } from '../../src/core/fleet-api';
import type { FleetShape } from '../../src/core/fleet/types';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { fleetWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, waitFleet } from './helpers';

// 3600 USD per hour is one dollar a second: a 2 USD budget warns ~1.6 s and ends ~2 s after the create.
const PRICEY = [{ cloud: 'fake', region: 'fake-a', instanceType: 'gpu-x', gpu: { model: 'H100', count: 1 }, pricePerHour: 3600, currency: 'USD' }];

describe.skipIf(!requireServer())('fleet with a budget per VM (FakeProvider)', () => {
  const fake = new FakeProvider({ offers: PRICEY });
  const name = `fb${Date.now().toString(36).slice(-5)}`;
  const slot = `${name}-gpu-0`;
  const shape = (generation: number, budgetUsd: number): FleetShape => ({
    name,
    generation,
    groups: [{ id: 'gpu', role: 'gpu', count: 1, vm: { clouds: ['fake'], k8s: 'off', budgetUsd } }],
  });
  let worker: TestWorker;
  let h: WorkflowHandle<typeof fleetWorkflow>;

  beforeAll(async () => {
    const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-fleet-budget-')));
    worker = await startTestWorker({ deps: { registry: new ProviderRegistry([fake]), ssh, prober: fake.prober() } });
    const client = await testEnv().client();
    h = await client.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: `fleet-${name}`,
      // A short restart backoff: a slot that were replaced would be replaced well within the wait below.
      args: [{ shape: shape(1, 2), tuning: { backoffBaseMs: 200, backoffCapMs: 400, readyPollMs: 200 }, vmTuning: FAST }],
    });
  });
  afterAll(async () => {
    await h?.signal(fleetTeardownSignal).catch(() => undefined);
    await h?.result().catch(() => undefined);
    await worker?.stop();
  });

  it('tears the slot VM down at its budget after the 80 % warning, and does not replace it', async () => {
    const held = await waitFleet(h, (s) => s.slots[0]?.stage === 'destroyed', 'the slot destroyed');
    expect(held.slots[0]).toMatchObject({ slot, attempt: 1, failedReason: 'VM terminated: its spend reached the budget' });
    expect(held.slots[0]?.restartAt).toBeUndefined();
    const client = await testEnv().client();
    const vm = (await client.workflow.getHandle(held.slots[0]!.workflowId).result()) as VmStatus;
    expect(vm.stage).toBe('terminated');
    expect(vm.budget?.warnedAt).toBeDefined();
    expect(vm.budget?.reachedAt).toBeDefined();
    expect(Date.parse(vm.budget!.reachedAt!)).toBeGreaterThanOrEqual(Date.parse(vm.budget!.warnedAt!));
    expect(fake.liveCount(slot)).toBe(0);
    // Many restart backoffs later: still the one attempt, one create, nothing live.
    await new Promise((r) => setTimeout(r, 3_000));
    const later = await h.query(fleetStatusQuery);
    expect(later.slots.map((s) => [s.attempt, s.stage])).toEqual([[1, 'destroyed']]);
    expect(later.converged).toBe(false);
    expect(fake.calls.filter((c) => c.primitive === 'create' && c.vmName === slot)).toHaveLength(1);
  });

  it('a changed template (a new budget) starts a fresh attempt', async () => {
    await h.executeUpdate(applyShapeUpdate, { args: [shape(2, 50)] });
    const s = await waitFleet(h, (x) => x.slots[0]?.attempt === 2 && x.slots[0].ready, 'attempt 2 ready');
    expect(s.converged).toBe(true);
  });
});
