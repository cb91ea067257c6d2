/** The harness's out-of-process worker: polls, survives a SIGKILL by being replaced, logs its setup. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { requireServer, testEnv } from '../../harness/temporal';
import { finishSignal, waitForSignalWorkflow } from '../../harness/test-workflows';
import { spawnWorkerProcess, type WorkerProcess } from '../../harness/worker-process';

describe.skipIf(!requireServer())('spawnWorkerProcess', () => {
  const procs: WorkerProcess[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-wp-'));
  afterAll(async () => {
    for (const p of procs) await p.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs a workflow across a SIGKILLed worker and its replacement', async () => {
    const env = testEnv();
    const taskQueue = `wp-${randomUUID()}`;
    const spawnOne = async (): Promise<WorkerProcess> => {
      const p = await spawnWorkerProcess({
        address: env.address,
        namespace: env.namespace,
        taskQueue,
        env: {
          GPUPROV_WORKFLOWS_PATH: path.join(__dirname, '..', '..', 'harness', 'test-workflows.ts'),
          GPUPROV_FAKE_STATE: path.join(dir, 'fake.json'),
          GPUPROV_SSH_DIR: path.join(dir, 'keys'),
        },
      });
      procs.push(p);
      return p;
    };

    const first = await spawnOne();
    expect(first.output()).toContain(`"${taskQueue}" in namespace "${env.namespace}" at ${env.address}; clouds: fake`);
    const client = await env.client();
    const handle = await client.workflow.start(waitForSignalWorkflow, { taskQueue, workflowId: taskQueue });
    const deadline = Date.now() + 30_000;
    while ((await handle.fetchHistory()).events!.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));

    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');

    await spawnOne();
    await handle.signal(finishSignal, 'after crash');
    expect(await handle.result()).toBe('after crash');
  });
});
