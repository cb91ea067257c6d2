/**
 * gpuprov's own workflows with the payload codec on (FakeProvider): the worker built by
 * buildWorker and a client with the same keys launch and tear down a VM; the activities' client
 * (the capacity memory's signal-with-start and query) works through the codec; the stored history
 * holds ciphertext only, and `provision explain`'s reader decodes it; the replay gate replays the
 * encrypted open workflows only through the same codec.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchVmHistory } from '../../src/client/history';
import { codecOption } from '../../src/codec';
import { refusalLines } from '../../src/core/replay-gate';
import { runReplayGate } from '../../src/server/replay-gate';
import { workflowBundlePath } from '../../src/server/workflow-bundle';
import { capacityMemoryQuery, vmWorkflowId, type VmSpec } from '../../src/core/api';
import { capacityMemoryWorkflowId } from '../../src/core/capacity-memory';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { buildWorker, runInBackground, type RunningWorker } from '../../src/worker';
import type { vmWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, testEnv } from '../harness/temporal';
import { FAST, waitStage } from './helpers';

describe.skipIf(!requireServer())('the payload codec with gpuprov workflows (FakeProvider)', () => {
  const env = { GPUPROV_CODEC_KEYS: `k1=${randomBytes(32).toString('base64')}` };
  const fake = new FakeProvider();
  const taskQueue = `test-codec-${randomUUID()}`;
  let running: RunningWorker | undefined;
  let client: Client;

  beforeAll(async () => {
    const t = testEnv();
    const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-test-keys-')));
    const worker = await buildWorker({
      connection: await t.nativeConnection(),
      namespace: t.namespace,
      taskQueue,
      env,
      deps: { registry: new ProviderRegistry([fake]), ssh, prober: fake.prober(), capacityMemoryMs: 60_000 },
    });
    running = await runInBackground(worker);
    client = new Client({ connection: (await t.client()).connection, namespace: t.namespace, ...codecOption(env) });
  });
  afterAll(async () => {
    await running?.stop();
  });

  const launch = (name: string): Promise<WorkflowHandle<typeof vmWorkflow>> => {
    const spec: VmSpec = { name, k8s: 'off' };
    return client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue,
      workflowId: `${vmWorkflowId(name)}-${randomUUID().slice(0, 6)}`,
      args: [{ spec, tuning: FAST }],
    });
  };

  it('launch, capacity memory and teardown work encrypted; the history holds no plaintext; explain reads it', async () => {
    fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', times: 1 });
    const h = await launch('codec1');
    const ready = await waitStage(h, 'ready');
    expect(ready.attempts.map((a) => `${a.offer.region}/${a.offer.instanceType}:${a.outcome}`)).toEqual(['fake-a/gpu-1:failed', 'fake-a/gpu-2:ready']);
    await h.signal('teardown');
    await h.result();

    // The memory was fed through the activities' client and is read back through the codec.
    const memory = await client.workflow.getHandle(capacityMemoryWorkflowId(taskQueue)).query(capacityMemoryQuery);
    expect(memory.map((e) => `${e.region}/${e.instanceType}`)).toEqual(['fake-a/gpu-1']);
    // And the plan reads it through the worker's converter: the next launch tries that offer last.
    const second = await launch('codec2');
    expect((await waitStage(second, 'ready')).attempts.map((a) => `${a.offer.region}/${a.offer.instanceType}:${a.outcome}`)).toEqual(['fake-a/gpu-2:ready']);
    await second.signal('teardown');
    await second.result();

    // Stored: every input and result is binary/encrypted; the VM's name is only in ids and search attributes.
    const raw = await (await testEnv().client()).workflow.getHandle(h.workflowId).fetchHistory();
    const started = raw.events![0]!.workflowExecutionStartedEventAttributes!;
    expect(Buffer.from(started.input!.payloads![0]!.metadata!['encoding']!).toString()).toBe('binary/encrypted');
    const results = raw.events!.flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? []);
    expect(results.length).toBeGreaterThan(0);
    for (const p of results) expect(Buffer.from(p.metadata!['encoding']!).toString()).toBe('binary/encrypted');

    const story = await fetchVmHistory(client, h.workflowId);
    expect(story.activities.map((a) => a.name)).toContain('prepareAndCreate');
    expect(story.closed?.status).toBe('completed');
    expect(JSON.stringify(story.activities.find((a) => a.name === 'prepareAndCreate')?.input)).toContain('gpu-1');
  });

  it('the replay gate replays encrypted open workflows through the codec, and refuses without it', async () => {
    const h = await launch('codec3');
    await waitStage(h, 'ready');
    const check = { client, taskQueue, bundlePath: await workflowBundlePath(), sample: 20 };
    const withCodec = await runReplayGate({ ...check, ...codecOption(env) });
    expect(withCodec.refused, refusalLines(withCodec, taskQueue).join('\n')).toBe(false);
    expect(withCodec.findings.find((f) => f.workflowId === h.workflowId)?.outcome).toBe('ok');
    const without = await runReplayGate(check);
    expect(without.refused).toBe(true);
    await h.signal('teardown');
    await h.result();
  });
});
