/**
 * The long-polling `watchCycle` on a fake clock: an idle Ready account is looked at once per
 * `readyIntervalMs`, heartbeats only every half the heartbeat timeout, and one cycle spans one
 * quiet window (the figures bench/p7-loss.ts scales to a VM-day).
 */
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { createWatcherActivities, viewHash } from '../../../src/activities/watcher';
import { SA } from '../../../src/core/search-attributes';
import { withWatcherTuning, type OwnerVm } from '../../../src/core/watcher';
import { ProviderRegistry } from '../../../src/providers/registry';
import { defaultFakeOffers, FakeProvider } from '../../harness/fake-provider';
import { memoryLedger } from '../../harness/memory-ledger';

const region = defaultFakeOffers()[0]!.region;
const at = { cloud: 'fake', region };

/** A client whose visibility lists one open Ready vmWorkflow `gpu1`. */
function fakeClient(owners: OwnerVm[]): () => Client {
  const keys = { [SA.vmName.name]: (o: OwnerVm) => o.vmName, [SA.stage.name]: (o: OwnerVm) => o.stage };
  const list = async function* () {
    for (const o of owners) yield { workflowId: o.workflowId, typedSearchAttributes: { get: (k: { name: string }) => keys[k.name]?.(o) } };
  };
  return () => ({ workflow: { list } }) as unknown as Client;
}

describe('watchCycle', () => {
  it('idle and Ready: one look per ready interval, one heartbeat per half timeout, one cycle per quiet window', async () => {
    const fake = new FakeProvider();
    const spec = { vmName: 'gpu1', owner: 'default', publicKeys: [], idempotencyKey: 'k', openPorts: [] };
    await fake.create(defaultFakeOffers()[0]!, {}, spec);
    let t = 0;
    const owners: OwnerVm[] = [{ workflowId: 'vm-gpu1', vmName: 'gpu1', stage: 'ready' }];
    const acts = createWatcherActivities({
      registry: new ProviderRegistry([fake]),
      owner: 'default',
      client: fakeClient(owners),
      ledger: memoryLedger(() => t),
      now: () => t,
      sleep: async (ms) => void (t += ms),
    });
    const tuning = withWatcherTuning({ readyIntervalMs: 20_000, quietWindowMs: 600_000, heartbeatTimeoutMs: 180_000 });
    const first = await acts.watchCycle({ at, taskQueue: 'q', known: [], tuning });
    expect(first).toMatchObject({ looks: 1, beats: 1 });
    expect(first.digest).toMatchObject({ instances: 1, owners: 1, unowned: [], lost: [], cadence: 'ready' });
    expect(first.signature).toHaveLength(22);
    t = 0;
    const idle = await acts.watchCycle({ at, taskQueue: 'q', known: [], tuning, lastSignature: first.signature });
    // Looks at 0, 20 s … 580 s, then the wait to 600 s; beats at 0, 90 s … 540 s.
    expect(idle).toMatchObject({ looks: 30, beats: 7 });
    expect(t).toBe(600_000);
  });

  it('a launching VM: the fast cadence; a change returns at once', async () => {
    const fake = new FakeProvider();
    let t = 0;
    let created = false;
    const owners: OwnerVm[] = [{ workflowId: 'vm-gpu2', vmName: 'gpu2', stage: 'booting' }];
    const acts = createWatcherActivities({
      registry: new ProviderRegistry([fake]),
      owner: 'default',
      client: fakeClient(owners),
      ledger: memoryLedger(() => t),
      now: () => t,
      sleep: async (ms) => {
        t += ms;
        // The instance shows up at the cloud 12 s in.
        if (t >= 12_000 && !created)
          created = Boolean(
            await fake.create(defaultFakeOffers()[0]!, {}, { vmName: 'gpu2', owner: 'default', publicKeys: [], idempotencyKey: 'k', openPorts: [] }),
          );
      },
    });
    const tuning = withWatcherTuning({ fastIntervalMs: 5_000 });
    const before = viewHash({ instances: [], owners });
    const v = await acts.watchCycle({ at, taskQueue: 'q', known: [], tuning, lastSignature: before });
    expect(v.digest).toMatchObject({ instances: 1, owners: 1, unowned: [], settling: 0, cadence: 'fast' });
    expect(v.looks).toBe(4);
    expect(t).toBe(15_000);
  });

  it('the ledger pages: evidence for recorded unowned names only, a handover merged first, the long gone forgotten, the summary read once per quarter keep time', async () => {
    const fake = new FakeProvider();
    const make = (vmName: string) =>
      fake.create(defaultFakeOffers()[0]!, {}, { vmName, owner: 'default', publicKeys: [], idempotencyKey: `k-${vmName}`, openPorts: [] });
    await make('mine');
    await make('theirs');
    let t = 1_000_000;
    const ledger = memoryLedger(() => t);
    ledger.record(['mine', 'gone'], [{ vmName: 'mine', createKey: 'ck1' }]);
    const acts = createWatcherActivities({ registry: new ProviderRegistry([fake]), owner: 'default', client: fakeClient([]), ledger, now: () => t });
    const tuning = withWatcherTuning({ ledgerKeepMs: 60_000 });
    const handover = [{ vmName: 'old', recordedAtMs: 0, seenAtMs: 0 }];
    const v = await acts.watchCycle({ at, taskQueue: 'q', known: [], tuning, handover });
    expect(v.evidence).toEqual([{ vmName: 'mine', createKeys: ['ck1'] }]);
    expect(v.digest.unowned.map((u) => u.vmName).sort()).toEqual(['mine', 'theirs']);
    expect(v).toMatchObject({ ledger: 3, handedOver: 1 });
    // 'old' was unseen past the keep time when asked: forgotten; 'gone' not yet asked (recorded just now).
    expect(
      ledger
        .entries()
        .map((e) => e.vmName)
        .sort(),
    ).toEqual(['gone', 'mine']);
    t += 60_000;
    const later = await acts.watchCycle({ at, taskQueue: 'q', known: [], tuning });
    // The pages' names asked about are answered to the pages, never carried in the workflow's digest.
    expect(later.digest.present).toEqual([]);
    expect(ledger.entries().map((e) => e.vmName)).toEqual(['mine']);
    // The summary is read again only a quarter of the keep time later; the looks between ask nothing.
    const signals = ledger.signals;
    t += 1_000;
    await acts.watchCycle({ at, taskQueue: 'q', known: [], tuning });
    expect(ledger.summaries).toBe(2);
    expect(ledger.signals).toBe(signals + 1); // 'mine' listed unowned: seen
  });
});
