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
import type { Client, WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import type { K3sTarget, ValidateInput, ValidateResult } from '../../src/activities/k3s';
import type { BootProbe } from '../../src/core/boot-probe';
import { FAILURE_TYPES } from '../../src/core/failures';
import type { FleetTuning } from '../../src/core/fleet/backoff';
import { applyShapeUpdate, fleetStatusQuery, fleetTeardownSignal, fleetWorkflowId, type FleetStatus } from '../../src/core/fleet-api';
import { slotName, type FleetGroup, type FleetShape } from '../../src/core/fleet/types';
import type { InstanceSpec, Json, Location, Offer } from '../../src/core/provider';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { fleetWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST } from '../workflows/helpers';

/**
 * A k3s-capable FakeProvider that records, at every create, how many instances of that VM were
 * already live, and can hold a VM's delete until the test releases it.
 */
class K3sCloud extends FakeProvider {
  readonly besideAtCreate: { vm: string; live: number }[] = [];
  private readonly holds = new Map<string, { release: () => void; released: Promise<void>; waiting: boolean }>();
  constructor() {
    super({ name: 'fakek3s' });
    this.caps = { ...this.caps, k8s: true };
  }
  override async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    this.besideAtCreate.push({ vm: spec.vmName, live: this.liveCount(spec.vmName) });
    return super.create(offer, prepared, spec);
  }
  override async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const h = this.holds.get(vmName);
    if (h) {
      h.waiting = true;
      await h.released;
    }
    return super.delete(at, vmName, ids);
  }
  /** Hold deletes of `vm` until `release()`; `waiting()`: one is being held. */
  hold(vm: string): { release: () => void; waiting: () => boolean } {
    let release = (): void => undefined;
    const released = new Promise<void>((r) => (release = r));
    const h = { release, released, waiting: false };
    this.holds.set(vm, h);
    return { release: () => (this.holds.delete(vm), h.release()), waiting: () => h.waiting };
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
            throw ApplicationFailure.create({
              type: FAILURE_TYPES.K3sInvalid,
              message: 'cluster not valid: no nvidia.com/gpu allocatable',
              nonRetryable: true,
            });
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

  async function startFleet(
    name: string,
    groups: FleetGroup[],
    tuning: Partial<FleetTuning> = {},
  ): Promise<WorkflowHandleWithFirstExecutionRunId<typeof fleetWorkflow>> {
    const shape: FleetShape = { name, generation: 1, groups };
    const h = await client.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: fleetWorkflowId(name),
      args: [{ shape, tuning: { backoffBaseMs: 1_000, backoffCapMs: 4_000, ...tuning }, vmTuning: FAST }],
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

  /** Every child workflow the fleet started (in every run), from its histories. */
  async function childrenOf(h: WorkflowHandle): Promise<string[]> {
    const ids: string[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${h.workflowId}'` })) {
      const events = (await client.workflow.getHandle(h.workflowId, run.runId).fetchHistory()).events ?? [];
      for (const e of events)
        if (e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId) ids.push(e.startChildWorkflowExecutionInitiatedEventAttributes.workflowId);
    }
    return ids.sort();
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
    const s = await until(
      h,
      (x) => x.slots.some((y) => y.slot === web && y.ready && y.attempt > 1) && x.slots.some((y) => y.slot === gpu && y.stage === 'k8s-failed'),
      'replaced web and kept gpu',
    );
    const w = s.slots.find((y) => y.slot === web)!;
    expect(w).toMatchObject({ failures: 0, ready: true, current: true });
    expect(s.log.some((l) => l.slot === web && l.what === 'beginDelete (k8s-failed)')).toBe(true);
    expect(cloud.liveCount(web)).toBe(1);
    expect(cloud.besideAtCreate.filter((c) => c.vm === web)).toEqual([
      { vm: web, live: 0 },
      { vm: web, live: 0 },
    ]);
    const webChildren = (await childrenOf(h)).filter((id) => id.startsWith(`vm-${web}-`));
    expect(webChildren).toHaveLength(2);
    const [old, replacement] = await Promise.all(webChildren.map(stateOf));
    expect(old!.status).toBe('COMPLETED'); // torn down through its own workflow, not abandoned
    expect(replacement!.start).toBeGreaterThanOrEqual(old!.close!);

    // gpu (keep): the same attempt, up and billed, not ready; the fleet is not converged
    const g = s.slots.find((y) => y.slot === gpu)!;
    expect(g).toMatchObject({
      attempt: g.attempt,
      ready: false,
      stage: 'k8s-failed',
      intent: 'active',
      failedReason: expect.stringContaining('k3s failed') as string,
    });
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
    await until(
      h,
      (x) => x.slots.some((y) => y.slot === kept && y.stage === 'k8s-failed') && x.slots.some((y) => y.slot === ok && y.ready),
      'kept gpu and readied web',
    );
    expect(cloud.liveCount(kept) + cloud.liveCount(ok)).toBe(2);
    await h.cancel();
    await h.result().catch(() => undefined);
    expect(cloud.liveCount(kept) + cloud.liveCount(ok)).toBe(0);
    const children = await childrenOf(h);
    expect(children).toHaveLength(2);
    for (const id of children) expect((await stateOf(id)).status, id).toBe('COMPLETED');
  }, 180_000);

  it('continue-as-new while the k8s-failed VM is being deleted: the new run probes with the teardown signal until the child has closed', async () => {
    const name = `kn${tag}`;
    const web = slotName(name, 'web', 0);
    failK3s.set(web, 1);
    const gate = cloud.hold(web);
    const groups = [group('web', 1)];
    const h = await startFleet(name, groups, { continueAsNewAfterEvents: 40 });
    try {
      for (let i = 0; i < 300 && !gate.waiting(); i++) await new Promise((r) => setTimeout(r, 100));
      expect(gate.waiting(), 'the k8s-failed VM is being deleted').toBe(true);
      // Re-applying the same shape is a no-op that grows the history: the fleet continues as new
      // while the child is still deleting, so no run awaits the child's completion.
      for (let i = 0; i < 40 && (await h.describe()).runId === h.firstExecutionRunId; i++) {
        await h.executeUpdate(applyShapeUpdate, { args: [{ name, generation: 1, groups }] });
      }
      expect((await h.describe()).runId).not.toBe(h.firstExecutionRunId);
    } finally {
      gate.release();
    }
    const s = await until(h, (x) => x.converged && (x.slots[0]?.attempt ?? 0) > 1, 'replaced web');
    const first = s.log.filter((l) => l.slot === web && l.attempt === s.slots[0]!.attempt - 1).map((l) => l.what);
    expect(first).toEqual(expect.arrayContaining(['beginDelete (k8s-failed)', 'vm terminated', 'vm gone (closed)', 'markDestroyed']));
    expect(first).not.toContain('vm terminated (closed)');
    expect(cloud.besideAtCreate.filter((c) => c.vm === web)).toEqual([
      { vm: web, live: 0 },
      { vm: web, live: 0 },
    ]);
    const [old, replacement] = await Promise.all((await childrenOf(h)).map(stateOf));
    expect(old!.status).toBe('COMPLETED');
    expect(replacement!.start).toBeGreaterThanOrEqual(old!.close!);
    await h.signal(fleetTeardownSignal);
    await h.result();
    expect(cloud.liveCount(web)).toBe(0);
  }, 180_000);

  it('every fleet history (its last run) replays with the current workflow code', async () => {
    expect(fleets).toHaveLength(3);
    const histories = await Promise.all(fleets.map(async (h) => ({ workflowId: h.workflowId, history: await h.fetchHistory() })));
    const results = Worker.runReplayHistories({ workflowsPath: join(__dirname, '..', '..', 'src', 'workflows', 'index.ts') }, histories);
    let n = 0;
    for await (const r of results) {
      expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
      n += 1;
    }
    expect(n).toBe(3);
  }, 180_000);
});
