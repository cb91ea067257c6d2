/** Cloud API activities run on their cloud's task queue; plan, SSH and the workflow stay on the main one. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { cloudTaskQueue } from '../../src/core/rate-limits';
import type { ReleaseInput } from '../../src/activities/attempt';
import { requireServer } from '../harness/temporal';
import { startLab, waitStage, type Lab } from './helpers';

describe.skipIf(!requireServer())('per-cloud task queues (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it("a launch's create, boot wait and release are scheduled on <queue>-cloud-fake; plan and the SSH probe on the main queue", async () => {
    // A failed first attempt (an ambiguous Capacity: the instance was made): the create activity releases it itself, on the cloud queue.
    lab.fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', ambiguous: true });
    const h = await lab.start({ name: 'queues1', k8s: 'off' });
    await waitStage(h, 'ready');
    await h.signal('teardown');
    await h.result();

    const history = await h.fetchHistory();
    const queueOf = new Map<string, string[]>();
    for (const e of history.events ?? []) {
      const a = e.activityTaskScheduledEventAttributes;
      if (!a?.activityType?.name || !a.taskQueue?.name) continue;
      queueOf.set(a.activityType.name, [...(queueOf.get(a.activityType.name) ?? []), a.taskQueue.name]);
    }
    const cloudQueue = cloudTaskQueue(lab.worker.taskQueue, 'fake');
    expect([...queueOf.keys()].sort()).toEqual(['awaitRunning', 'ensureWatcher', 'planOffers', 'prepareAndCreate', 'probeSsh', 'releaseAt']);
    for (const name of ['prepareAndCreate', 'awaitRunning', 'releaseAt']) expect(new Set(queueOf.get(name))).toEqual(new Set([cloudQueue]));
    // ensureWatcher is a Temporal call (signal-with-start), not a cloud call: the main queue.
    for (const name of ['planOffers', 'probeSsh', 'ensureWatcher']) expect(new Set(queueOf.get(name))).toEqual(new Set([lab.worker.taskQueue]));
    // No local activity: the Capacity answer is told to the capacity memory by the create activity
    // itself (src/activities/attempt.ts), on the main queue the memory lives on.
    expect((history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toEqual([]);
    const releases = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === 'releaseAt')
      .map((a) => defaultPayloadConverter.fromPayload<ReleaseInput>(a!.input!.payloads![0]!));
    expect(releases.map((r) => r.capacity)).toEqual([undefined]);
    expect(queueOf.get('releaseAt')).toHaveLength(1); // the teardown: the failed attempt was released by its create activity
    const failed = (history.events ?? []).find((e) => e.activityTaskFailedEventAttributes)?.activityTaskFailedEventAttributes?.failure;
    expect(failed?.applicationFailureInfo?.type).toBe('Capacity');
    expect(lab.fake.liveCount('queues1')).toBe(0);
  });

  it('the worker runs one extra worker per cloud of its registry, on that cloud’s queue', () => {
    expect([...lab.worker.worker.cloudWorkers.keys()]).toEqual(['fake']);
    expect(lab.worker.worker.cloudWorkers.get('fake')!.options.taskQueue).toBe(cloudTaskQueue(lab.worker.taskQueue, 'fake'));
  });
});
