/** The deployment's capacity memory on the dev server: a second launch tries a Capacity offer last, also after a worker restart. */
import { readEvents } from '../../src/client/history';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { capacityMemoryQuery, vmWorkflowId, type VmSpec } from '../../src/core/api';
import { capacityMemoryWorkflowId } from '../../src/core/capacity-memory';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity, type SshIdentity } from '../../src/ssh';
import type { vmWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, waitStage } from './helpers';

describe.skipIf(!requireServer())('capacity memory (FakeProvider)', () => {
  const fake = new FakeProvider();
  const taskQueue = `test-capmem-${randomUUID()}`;
  let ssh: SshIdentity;
  let worker: TestWorker | undefined;
  const startWorker = async () => {
    worker = await startTestWorker({ taskQueue, deps: { registry: new ProviderRegistry([fake]), ssh, prober: fake.prober(), capacityMemoryMs: 60_000 } });
  };
  const launch = async (name: string, parallel?: number): Promise<WorkflowHandle<typeof vmWorkflow>> => {
    const client = await testEnv().client();
    const spec: VmSpec = { name, k8s: 'off', ...(parallel ? { parallel } : {}) };
    return client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue,
      workflowId: `${vmWorkflowId(name)}-${randomUUID().slice(0, 6)}`,
      args: [{ spec, tuning: FAST }],
    });
  };
  const readyOffers = async (h: WorkflowHandle<typeof vmWorkflow>) => {
    const s = await waitStage(h, 'ready');
    await h.signal('teardown');
    await h.result();
    return s.attempts.map((a) => `${a.offer.region}/${a.offer.instanceType}:${a.outcome}`);
  };

  beforeAll(async () => {
    ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-test-keys-')));
    await startWorker();
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it('a Capacity answer is remembered by the deployment; the next launch tries that offer last, even after a worker restart', async () => {
    fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', times: 1 });
    expect(await readyOffers(await launch('capmem1'))).toEqual(['fake-a/gpu-1:failed', 'fake-a/gpu-2:ready']);

    const client = await testEnv().client();
    const memory = await client.workflow.getHandle(capacityMemoryWorkflowId(taskQueue)).query(capacityMemoryQuery);
    expect(memory.map((e) => `${e.cloud}/${e.region}/${e.instanceType}`)).toEqual(['fake/fake-a/gpu-1']);
    expect(memory[0]!.untilMs - memory[0]!.seenAtMs).toBe(60_000);

    // Same deployment, new worker (the memory lives on the server, not in a worker).
    await worker?.stop();
    await startWorker();
    const second = await launch('capmem2');
    expect(await readyOffers(second)).toEqual(['fake-a/gpu-2:ready']);
    const creates = fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'capmem2');
    expect(creates.map((c) => `${c.region}/${c.instanceType}`)).toEqual(['fake-a/gpu-2']);

    // The plan says why (planOffers' result in the history, which `provision explain` reads).
    const history = await second.fetchHistory();
    const plan = readEvents(history.events ?? []).activities.find((a) => a.name === 'planOffers')?.result as {
      offers: { region: string; instanceType: string }[];
      demoted?: { key: string; reason: string }[];
    };
    expect(plan.offers.map((o) => `${o.region}/${o.instanceType}`).at(-1)).toBe('fake-a/gpu-1');
    expect(plan.demoted?.map((d) => d.key)).toEqual(['fake/fake-a/gpu-1']);
    expect(plan.demoted?.[0]?.reason).toMatch(/answered Capacity .* tried last/);
  });

  it('a hedged launch (--parallel 2) feeds the memory too: its Capacity answer is remembered', async () => {
    const client = await testEnv().client();
    const memory = client.workflow.getHandle(capacityMemoryWorkflowId(taskQueue));
    await memory.terminate('test: start without a capacity memory').catch(() => undefined);
    const since = Date.now();
    fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', times: 1 });
    const offers = await readyOffers(await launch('capmem3', 2));
    expect(offers).toContain('fake-a/gpu-1:failed');
    const entries = await client.workflow.getHandle(capacityMemoryWorkflowId(taskQueue)).query(capacityMemoryQuery);
    // Seen by this launch (a terminated memory still answers queries with its old entries).
    expect(entries.filter((e) => e.seenAtMs >= since).map((e) => `${e.cloud}/${e.region}/${e.instanceType}`)).toEqual(['fake/fake-a/gpu-1']);
  });
});
