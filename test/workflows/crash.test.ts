import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { vmWorkflow } from '../../src/workflows';
import { teardownSignal } from '../../src/core/api';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, testEnv } from '../harness/temporal';
import { spawnWorkerProcess, type WorkerProcess } from '../harness/worker-process';
import { FAST, waitStage } from './helpers';

describe.skipIf(!requireServer())('worker crash (SIGKILL) mid-launch', () => {
  const procs: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
  });

  it('killed while booting, then restarted → the launch completes with exactly one instance', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuprov-crash-'));
    const stateFile = join(dir, 'fake.json');
    const fake = new FakeProvider({ stateFile, bootMs: 6_000 });
    const env = testEnv();
    const taskQueue = `crash-${randomUUID()}`;
    const workerEnv = { GPUPROV_FAKE_STATE: stateFile, GPUPROV_FAKE_PROBE: '1', GPUPROV_SSH_DIR: join(dir, 'keys') };
    const first = await spawnWorkerProcess({ address: env.address, namespace: env.namespace, taskQueue, env: workerEnv });
    procs.push(first);

    const client = await env.client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue,
      workflowId: `vm-crash-${randomUUID().slice(0, 6)}`,
      args: [{ spec: { name: 'crash1', k8s: 'off' }, tuning: FAST }],
    });
    await waitStage(h, 'booting', 60_000);
    await first.kill('SIGKILL');
    expect(fake.liveCount('crash1')).toBe(1);

    const second = await spawnWorkerProcess({ address: env.address, namespace: env.namespace, taskQueue, env: workerEnv });
    procs.push(second);
    const s = await waitStage(h, 'ready', 90_000);
    expect(fake.liveCount('crash1')).toBe(1);
    expect(fake.callsOf('create').filter((c) => c.vmName === 'crash1')).toHaveLength(1);
    expect(s.attempts).toHaveLength(1);
    expect(s.instanceIds).toEqual([fake.live('crash1')[0]!.id]);

    await h.signal(teardownSignal);
    await h.result();
    expect(fake.liveCount('crash1')).toBe(0);
  });
});
