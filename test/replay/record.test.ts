/**
 * Records the saved histories (only with GPUPROV_RECORD_HISTORIES=1): a single-attempt launch, a
 * failover with compensation, and a standalone teardown, each on the run's dev server.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, inject, it } from 'vitest';
import { teardownSignal } from '../../src/core/api';
import type { teardownWorkflow } from '../../src/workflows';
import { requireServer, testEnv } from '../harness/temporal';
import { startLab, waitStage } from '../workflows/helpers';

const record = process.env.GPUPROV_RECORD_HISTORIES === '1';
const dir = join(__dirname, '..', 'histories');

/** The CLI's `workflow show -o json` is the documented proto3-JSON form that replay loads. */
async function save(h: WorkflowHandle, name: string): Promise<void> {
  const json = execFileSync(inject('temporalCliPath'), ['workflow', 'show', '-w', h.workflowId, '-o', 'json', '--address', testEnv().address], { encoding: 'utf8' });
  writeFileSync(join(dir, name), json.trimEnd() + '\n');
}

describe.skipIf(!record || !requireServer())('record histories', () => {
  it('records the three scenarios', async () => {
    const lab = await startLab();
    try {
      const one = await lab.start({ name: 'hist-one', k8s: 'off' }, { healthIntervalMs: 60_000 });
      await waitStage(one, 'ready');
      await one.signal(teardownSignal);
      await one.result();
      await save(one, 'single-attempt.json');

      lab.fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', ambiguous: true });
      const two = await lab.start({ name: 'hist-two', k8s: 'off' }, { healthIntervalMs: 60_000 });
      await waitStage(two, 'ready');
      await two.signal(teardownSignal);
      await two.result();
      await save(two, 'failover-compensated.json');

      const client = await testEnv().client();
      const td = await client.workflow.start<typeof teardownWorkflow>('teardownWorkflow', {
        taskQueue: lab.worker.taskQueue,
        workflowId: `teardown-hist-${Date.now()}`,
        args: [{ target: { at: { cloud: 'fake', region: 'fake-a' }, vmName: 'hist-two', instanceIds: [], mode: 'full', pollIntervalMs: 200 }, tuning: { mutateInitialIntervalMs: 100 } }],
      });
      await td.result();
      await save(td, 'teardown.json');
    } finally {
      await lab.stop();
    }
  });
});
