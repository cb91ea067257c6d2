/** `ensureWatcher`: one signal-with-start per watcher per NUDGE_REUSE_MS in a process; callers in the window share it. */
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { createWatcherActivities, NUDGE_REUSE_MS } from '../../../src/activities/watcher';
import { ProviderRegistry } from '../../../src/providers/registry';
import { FakeProvider } from '../../harness/fake-provider';

function countingClient(fail: () => boolean) {
  const started: string[] = [];
  const client = {
    workflow: {
      signalWithStart: async (_type: string, o: { workflowId: string }) => {
        await new Promise((r) => setTimeout(r, 5));
        if (fail()) throw new Error('server unavailable');
        started.push(o.workflowId);
      },
    },
  } as unknown as Client;
  return { started, client: () => client };
}

describe('ensureWatcher', () => {
  it('launches together nudge each watcher once; after the window, or in another region or queue, again', async () => {
    let t = 0;
    const { started, client } = countingClient(() => false);
    const acts = createWatcherActivities({ registry: new ProviderRegistry([new FakeProvider()]), owner: 'prod', client, now: () => t });
    const at = { cloud: 'fake', region: 'r1' };
    const ids = await Promise.all(Array.from({ length: 50 }, () => acts.ensureWatcher({ at, taskQueue: 'q' })));
    expect(new Set(ids.map((i) => i.workflowId)).size).toBe(1);
    expect(started).toHaveLength(1);
    t += NUDGE_REUSE_MS - 1;
    await acts.ensureWatcher({ at, taskQueue: 'q' });
    expect(started).toHaveLength(1);
    await acts.ensureWatcher({ at: { cloud: 'fake', region: 'r2' }, taskQueue: 'q' });
    await acts.ensureWatcher({ at, taskQueue: 'q2' });
    expect(started).toHaveLength(3);
    t += 1;
    await acts.ensureWatcher({ at, taskQueue: 'q' });
    expect(started).toHaveLength(4);
  });

  it('a nudge that failed is not reused: the next caller tries again', async () => {
    let failing = true;
    const { started, client } = countingClient(() => failing);
    const acts = createWatcherActivities({ registry: new ProviderRegistry([new FakeProvider()]), owner: 'prod', client, now: () => 0 });
    const at = { cloud: 'fake', region: 'r1' };
    await expect(acts.ensureWatcher({ at, taskQueue: 'q' })).rejects.toThrow('server unavailable');
    failing = false;
    await acts.ensureWatcher({ at, taskQueue: 'q' });
    expect(started).toHaveLength(1);
  });
});
