/**
 * The account watcher's `spot` cadence (src/core/watcher.ts): a Ready VM whose create was recorded
 * as spot makes its region's watcher look every `spotIntervalMs`, so a preemption notice is acted on
 * long before a slow `ready` look would see it. Here the ready look is 60 s and the notice 15 s: the
 * replacement can only be created before the deadline because the watcher looked at the spot cadence.
 * An on-demand VM leaves the watcher at `ready`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { teardownSignal, type VmSpec } from '../../src/core/api';
import { watcherWorkflowId } from '../../src/core/watcher';
import { watcherStateQuery, type WatcherState } from '../../src/core/watcher-api';
import type { vmWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, testEnv } from '../harness/temporal';
import { waitFor } from './helpers';
import { QUIET, startWatchedFake, type WatchedFake } from './watched-fake';

describe.skipIf(!requireServer())('the watcher looks at the spot cadence while a spot VM is Ready (FakeProvider)', () => {
  const fake = new FakeProvider({ spot: { priceFactor: 0.4 } });
  let lab: WatchedFake;
  beforeAll(async () => {
    lab = await startWatchedFake(fake, 'test-spot-cadence', {
      fastIntervalMs: 300,
      readyIntervalMs: 60_000,
      spotIntervalMs: 300,
      slowIntervalMs: 60_000,
      heartbeatTimeoutMs: 6_000,
    });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  async function start(spec: Partial<VmSpec>): Promise<{ h: WorkflowHandle<typeof vmWorkflow>; name: string }> {
    const name = `cad-${randomUUID().slice(0, 6)}`;
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: lab.worker.taskQueue,
      workflowId: `vm-${name}`,
      args: [{ spec: { k8s: 'off', clouds: ['fake'], regions: ['fake-a'], ...spec, name }, tuning: QUIET }],
    });
    return { h, name };
  }

  async function watcherCadence(want: NonNullable<WatcherState['cadence']>): Promise<WatcherState> {
    const client = await testEnv().client();
    const w = client.workflow.getHandle(watcherWorkflowId(lab.deployment, 'fake', 'fake-a'));
    let last: WatcherState | undefined;
    for (let i = 0; i < 300; i++) {
      last = (await w.query(watcherStateQuery).catch(() => undefined)) ?? last;
      if (last && last.cadence === want) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the watcher's cadence never became ${want}: ${JSON.stringify(last)}`);
  }

  it('an on-demand VM: ready; a spot VM: spot, and its notice is acted on before the deadline', async () => {
    fake.setBootMs(0);
    const onDemand = await start({});
    await waitFor(onDemand.h, (s) => s.stage === 'ready', 'on-demand ready', 30_000);
    await watcherCadence('ready');

    const spot = await start({ spot: 'only', recover: true });
    const first = await waitFor(spot.h, (s) => s.stage === 'ready', 'spot ready', 30_000);
    expect(first.offer?.market).toBe('spot');
    await watcherCadence('spot');
    const oldId = first.instanceIds[0]!;
    const notice = fake.preempt(oldId, { noticeMs: 15_000 })!;
    const again = await waitFor(spot.h, (s) => s.stage === 'ready' && s.recovered?.count === 1, 'replacement ready', 30_000);
    const created = fake.callsOf('create').filter((c) => c.vmName === spot.name);
    expect(created).toHaveLength(2);
    expect(created[1]!.at).toBeLessThan(Date.parse(notice.deadline!));
    expect(again.recovered?.lastCause).toMatchObject({ kind: 'preempted', deadline: notice.deadline });

    for (const v of [onDemand, spot]) {
      await v.h.signal(teardownSignal);
      await v.h.result();
      expect(fake.liveCount(v.name)).toBe(0);
    }
  });
});
