/**
 * The fleet scenario of record.test.ts, on the local cloud (a real sshd per node) so the
 * bootstrap activities run: apply 1 node → scale to 2 → back to 1 → down. Each step waits for
 * convergence, so the history's command sequence does not depend on timing.
 */
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { createActivities } from '../../src/activities';
import type { SshIdentity } from '../../src/ssh/identity';
import { applyShapeUpdate, fleetStatusQuery, fleetTeardownSignal, type FleetStatus } from '../../src/core/fleet-api';
import { slotName, type FleetShape } from '../../src/core/fleet/types';
import { LocalProvider } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import type { fleetWorkflow } from '../../src/workflows';
import { startTestWorker, testEnv } from '../harness/temporal';
import { FAST } from '../workflows/helpers';

const NAME = 'hfleet';

async function until(h: WorkflowHandle, pred: (s: FleetStatus) => boolean, what: string): Promise<void> {
  let last: FleetStatus | undefined;
  for (let i = 0; i < 600; i++) {
    last = await h.query(fleetStatusQuery).catch(() => last);
    if (last && pred(last)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`fleet never ${what}: ${JSON.stringify(last?.slots.map((s) => [s.slot, s.attempt, s.stage, s.failedReason]))}`);
}

/** Runs the fleet to its end; returns its workflow ID and that of the attempt scaled away (slot `web-1`). */
export async function recordFleet(root: string, ssh: SshIdentity): Promise<{ fleetId: string; slotId: string }> {
  const activities = createActivities({ registry: new ProviderRegistry([new LocalProvider({ root })]), ssh, owner: 'default' });
  const worker = await startTestWorker({ activities });
  const portBase = 30_000 + Math.floor(Math.random() * 20_000);
  const shape = (generation: number, count: number): FleetShape => ({
    name: NAME,
    generation,
    groups: [
      {
        id: 'web',
        role: 'web',
        count,
        vm: { clouds: ['local'], k8s: 'off' },
        bootstrap: {
          verify: ['true'],
          start: 'exec python3 -m http.server "$PORT" --bind 127.0.0.1',
          ready: { tcp: {} },
          timeout: 30,
          portBase,
          dir: join(root, 'boot'),
        },
      },
    ],
  });
  try {
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: `fleet-${NAME}`,
      args: [{ shape: shape(1, 1), tuning: { backoffBaseMs: 1_000, backoffCapMs: 4_000, readyPollMs: 300 }, vmTuning: { ...FAST, healthIntervalMs: 60_000 } }],
    });
    const converged = (generation: number, slots: number) => (s: FleetStatus) => s.converged && s.generation === generation && s.slots.length === slots;
    await until(h, converged(1, 1), 'converged with 1 node');
    await h.executeUpdate(applyShapeUpdate, { args: [shape(2, 2)] });
    await until(h, converged(2, 2), 'converged with 2 nodes');
    const scaledAway = (await h.query(fleetStatusQuery)).slots.find((x) => x.slot === slotName(NAME, 'web', 1))!.workflowId;
    await h.executeUpdate(applyShapeUpdate, { args: [shape(3, 1)] });
    await until(h, converged(3, 1), 'converged back to 1 node');
    await h.signal(fleetTeardownSignal);
    const end = await h.result();
    if (end.slots.length !== 0) throw new Error(`fleet ended with slots left: ${JSON.stringify(end.slots)}`);
    return { fleetId: h.workflowId, slotId: scaledAway };
  } finally {
    await worker.stop();
  }
}
