/**
 * Fleets whose VMs end their k3s step `k8s-failed` (the VM still up and billed), on the run's dev
 * server with the in-memory FakeProvider as a k3s cloud: its k3s activities are stubbed (boot
 * install found, API up) and validation fails for the slots a test names. The cloud counts
 * instances at every create, so "a replacement only after the old one is gone" is checked where
 * the bill is. Each fleet's history is replayed with the current workflow code at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import type { K3sTarget, ValidateInput, ValidateResult } from '../../src/activities/k3s';
import type { BootProbe } from '../../src/core/boot-probe';
import { FAILURE_TYPES } from '../../src/core/failures';
import { fleetStatusQuery, fleetTeardownSignal, fleetWorkflowId, type FleetStatus } from '../../src/core/fleet-api';
import { slotName, type FleetGroup, type FleetShape } from '../../src/core/fleet/types';
import type { InstanceSpec, Json, Offer } from '../../src/core/provider';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { fleetWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST } from '../workflows/helpers';

/** A k3s-capable FakeProvider that records, at every create, how many instances of that VM were already live. */
class K3sCloud extends FakeProvider {
  readonly besideAtCreate: { vm: string; live: number }[] = [];
  constructor() {
    super({ name: 'fakek3s' });
    this.caps = { ...this.caps, k8s: true };
  }
  override async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    this.besideAtCreate.push({ vm: spec.vmName, live: this.liveCount(spec.vmName) });
    return super.create(offer, prepared, spec);
  }
}

const INSTALLED: BootProbe = { marker: 'done', markerGpu: false, lockHeld: false, cloudInit: 'done', unitActive: true, gpuPresent: false };

describe.skipIf(!requireServer())('fleets with k8s-failed VMs (FakeProvider as a k3s cloud)', () => {
  let root: string;
  let cloud: K3sCloud;
  let worker: TestWorker;
  let client: Client;
  /** Validations still to fail, by VM (slot) name; `Infinity` = always. */
  const failK3s = new Map<string, number>();
  const fleets: WorkflowHandle<typeof fleetWorkflow>[] = [];
  const tag = Date.now().toString(36).slice(-5);

  const vmOf = (t: K3sTarget): string => cloud.live().find((i) => i.port === t.endpoint.port)?.vmName ?? '?';

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-k3s-fleet-'));
    cloud = new K3sCloud();
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const base = createActivities({ registry: new ProviderRegistry([cloud]), ssh, owner: 'default', prober: cloud.prober() });
    worker = await startTestWorker({
      activities: {
        ...base,
        readBootProbe: async (): Promise<BootProbe> => INSTALLED,
        awaitApi: async (): Promise<{ apiPort: number }> => ({ apiPort: 6443 }),
        validateCluster: async (input: ValidateInput): Promise<ValidateResult> => {
          const vm = vmOf(input.target);
          const left = failK3s.get(vm) ?? 0;
          if (left > 0) {
            failK3s.set(vm, left - 1);
            throw ApplicationFailure.create({ type: FAILURE_TYPES.K3sInvalid, message: 'cluster not valid: no nvidia.com/gpu allocatable', nonRetryable: true });
          }
          return { ok: true, apiPort: 6443, sans: { dns: [], ips: ['127.0.0.1'] } };
        },
      },
    });
    client = await testEnv().client();
  });

  afterAll(async () => {
    for (const h of fleets) await h.signal(fleetTeardownSignal).catch(() => undefined);
    for (const h of fleets) await h.result().catch(() => undefined);
    await worker?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const group = (id: string, count: number, extra: Partial<FleetGroup> = {}): FleetGroup => ({ id, role: id, count, vm: { clouds: [cloud.name] }, ...extra });

  async function startFleet(name: string, groups: FleetGroup[]): Promise<WorkflowHandle<typeof fleetWorkflow>> {
    const shape: FleetShape = { name, generation: 1, groups };
    const h = await client.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: fleetWorkflowId(name),
      args: [{ shape, tuning: { backoffBaseMs: 1_000, backoffCapMs: 4_000 }, vmTuning: FAST }],
    });
    fleets.push(h);
    return h;
  }

  async function until(h: WorkflowHandle, pred: (s: FleetStatus) => boolean, what: string): Promise<FleetStatus> {
    let last: FleetStatus | undefined;
    for (let i = 0; i < 600; i++) {
      last = await h.query(fleetStatusQuery).catch(() => last);
      if (last && pred(last)) return last;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`fleet never ${what}: ${JSON.stringify(last?.slots.map((s) => [s.slot, s.attempt, s.stage, s.pending, s.failedReason]))}`);
  }

  /** Every child workflow the fleet started, from its history. */
  async function childrenOf(h: WorkflowHandle): Promise<string[]> {
    const events = (await h.fetchHistory()).events ?? [];
    return events.flatMap((e) => (e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ? [e.startChildWorkflowExecutionInitiatedEventAttributes.workflowId] : []));
  }

  const stateOf = async (id: string): Promise<{ status: string; start: number; close?: number }> => {
    const d = await client.workflow.getHandle(id).describe();
    return { status: d.status.name, start: d.startTime.getTime(), ...(d.closeTime ? { close: d.closeTime.getTime() } : {}) };
  };

  it('teardown (default): the k8s-failed VM is deleted through its own workflow, the replacement starts after it closed; keep: the VM stays, not ready', async () => {
    const name = `kf${tag}`;
    const web = slotName(name, 'web', 0);
    const gpu = slotName(name, 'gpu', 0);
    failK3s.set(web, 1);
    failK3s.set(gpu, Infinity);
    const h = await startFleet(name, [group('web', 1), group('gpu', 1, { onK8sFailure: 'keep' })]);

    // web: k8s-failed on attempt 1, torn down, replaced, ready
    const s = await until(h, (x) => x.slots.some((y) => y.slot === web && y.ready && y.attempt > 1) && x.slots.some((y) => y.slot === gpu && y.stage === 'k8s-failed'), 'replaced web and kept gpu');
    const w = s.slots.find((y) => y.slot === web)!;
    expect(w).toMatchObject({ failures: 0, ready: true, current: true });
    expect(s.log.some((l) => l.slot === web && l.what === 'beginDelete (k8s-failed)')).toBe(true);
    expect(cloud.liveCount(web)).toBe(1);
    expect(cloud.besideAtCreate.filter((c) => c.vm === web)).toEqual([{ vm: web, live: 0 }, { vm: web, live: 0 }]);
    const webChildren = (await childrenOf(h)).filter((id) => id.startsWith(`vm-${web}-`));
    expect(webChildren).toHaveLength(2);
    const [old, replacement] = await Promise.all(webChildren.map(stateOf));
    expect(old!.status).toBe('COMPLETED'); // torn down through its own workflow, not abandoned
    expect(replacement!.start).toBeGreaterThanOrEqual(old!.close!);

    // gpu (keep): the same attempt, up and billed, not ready; the fleet is not converged
    const g = s.slots.find((y) => y.slot === gpu)!;
    expect(g).toMatchObject({ attempt: g.attempt, ready: false, stage: 'k8s-failed', intent: 'active', failedReason: expect.stringContaining('k3s failed') as string });
    expect(s.converged).toBe(false);
    expect(cloud.liveCount(gpu)).toBe(1);
    expect((await stateOf(g.workflowId)).status).toBe('RUNNING');
    expect(cloud.besideAtCreate.filter((c) => c.vm === gpu)).toHaveLength(1);

    // fleet down: the kept VM is torn down too; the fleet ends only after every child closed
    await h.signal(fleetTeardownSignal);
    expect((await h.result()).slots).toEqual([]);
    expect(cloud.liveCount(web) + cloud.liveCount(gpu)).toBe(0);
    for (const id of await childrenOf(h)) expect((await stateOf(id)).status, id).toBe('COMPLETED');
  }, 180_000);

  it('fleet cancel with a kept k8s-failed VM and a ready one: both deleted through their workflows, none abandoned', async () => {
    const name = `kc${tag}`;
    const kept = slotName(name, 'gpu', 0);
    const ok = slotName(name, 'web', 0);
    failK3s.set(kept, Infinity);
    const h = await startFleet(name, [group('gpu', 1, { onK8sFailure: 'keep' }), group('web', 1)]);
    await until(h, (x) => x.slots.some((y) => y.slot === kept && y.stage === 'k8s-failed') && x.slots.some((y) => y.slot === ok && y.ready), 'kept gpu and readied web');
    expect(cloud.liveCount(kept) + cloud.liveCount(ok)).toBe(2);
    await h.cancel();
    await h.result().catch(() => undefined);
    expect(cloud.liveCount(kept) + cloud.liveCount(ok)).toBe(0);
    const children = await childrenOf(h);
    expect(children).toHaveLength(2);
    for (const id of children) expect((await stateOf(id)).status, id).toBe('COMPLETED');
  }, 180_000);

  it('both fleet histories replay with the current workflow code', async () => {
    expect(fleets).toHaveLength(2);
    const histories = await Promise.all(fleets.map(async (h) => ({ workflowId: h.workflowId, history: await h.fetchHistory() })));
    const results = Worker.runReplayHistories({ workflowsPath: join(__dirname, '..', '..', 'src', 'workflows', 'index.ts') }, histories);
    let n = 0;
    for await (const r of results) {
      expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
      n += 1;
    }
    expect(n).toBe(2);
  }, 180_000);
});
