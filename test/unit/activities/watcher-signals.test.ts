/** `recordOnce`: the ledger pages' feed, group-committed per watcher; a caller never goes on before a signal carrying its name was accepted. */
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { RECORD_REUSE_MS, recordOnce } from '../../../src/activities/watcher-signals';
import { ledgerPageId, pageOf } from '../../../src/core/ledger-pages';

type Rec = { vmNames: string[]; createKeys?: { vmName: string; createKey: string }[]; wake?: boolean; paged?: true; spotNames?: string[] };

/**
 * A client counting sends: each send signals the names' ledger pages, then the watcher; `sent`
 * holds one row per send (the watcher's ID, the names and keys its pages got, its wake-up),
 * `signals` every signal-with-start as made.
 */
function countingClient(fail: () => boolean) {
  const sent: { workflowId: string; vmNames: string[]; createKeys?: { vmName: string; createKey: string }[]; wake?: boolean }[] = [];
  const signals: { type: string; workflowId: string; rec: Rec }[] = [];
  const starts: { type: string; workflowId: string; policy?: string }[] = [];
  let paged: Rec[] = [];
  /** Both a signal-with-start (with `signalArgs`) and a plain start. */
  const call = async (type: string, o: { workflowId: string; signalArgs?: [Rec]; workflowIdConflictPolicy?: string }) => {
    const rec = o.signalArgs?.[0];
    if (rec) signals.push({ type, workflowId: o.workflowId, rec });
    else starts.push({ type, workflowId: o.workflowId, ...(o.workflowIdConflictPolicy ? { policy: o.workflowIdConflictPolicy } : {}) });
    let pages: Rec[] = [];
    if (type === 'ledgerPageWorkflow') paged.push(rec!);
    else [pages, paged] = [paged, []];
    const failed = fail();
    await new Promise((r) => setTimeout(r, 5));
    if (failed) throw new Error('server unavailable');
    if (type === 'ledgerPageWorkflow') return;
    const vmNames = pages.flatMap((p) => p.vmNames);
    const createKeys = pages.flatMap((p) => p.createKeys ?? []);
    sent.push({ workflowId: o.workflowId, vmNames, ...(createKeys.length ? { createKeys } : {}), ...(rec?.wake ? { wake: rec.wake } : {}) });
  };
  const client = { workflow: { signalWithStart: call, start: call } } as unknown as Client;
  return { sent, signals, starts, client };
}

describe('recordOnce', () => {
  it('50 creates at once cost one signal carrying each name; callers while it is in flight ride the next one together', async () => {
    const { sent, client } = countingClient(() => false);
    const record = recordOnce({ owner: 'prod', now: () => 0 });
    const at = { cloud: 'fake', region: 'r1' };
    const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => record(client, { at, taskQueue: 'q' }, [`vm${i}`])));
    expect(new Set(ids)).toEqual(new Set(['gpuprov-watch:prod:fake:r1']));
    expect(sent).toHaveLength(1);
    expect(sent.flatMap((s) => s.vmNames).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `vm${i}`).sort());
    const first = record(client, { at, taskQueue: 'q' }, ['late0']);
    await new Promise((r) => setTimeout(r, 1)); // in flight now
    await Promise.all([first, ...Array.from({ length: 20 }, (_, i) => record(client, { at, taskQueue: 'q' }, [`late${i + 1}`]))]);
    expect(sent.slice(1).map((s) => s.vmNames.length)).toEqual([1, 20]);
  });

  it('a name accepted moments ago is not sent again; after RECORD_REUSE_MS, in another region or queue, it is', async () => {
    let t = 0;
    const { sent, client } = countingClient(() => false);
    const record = recordOnce({ owner: 'prod', now: () => t });
    const at = { cloud: 'fake', region: 'r1' };
    await record(client, { at, taskQueue: 'q' }, ['gpu1']);
    t += RECORD_REUSE_MS - 1;
    await record(client, { at, taskQueue: 'q' }, ['gpu1']);
    expect(sent).toHaveLength(1);
    await record(client, { at: { cloud: 'fake', region: 'r2' }, taskQueue: 'q' }, ['gpu1']);
    await record(client, { at, taskQueue: 'q2' }, ['gpu1']);
    expect(sent).toHaveLength(3);
    t += 1;
    await record(client, { at, taskQueue: 'q' }, ['gpu1']);
    expect(sent).toHaveLength(4);
  });

  it("a create's record leaves the watcher asleep; a Ready VM's record, or none at all, wakes it", async () => {
    const { sent, client } = countingClient(() => false);
    const record = recordOnce({ owner: 'prod', now: () => 0 });
    const at = { cloud: 'fake', region: 'r1' };
    await record(client, { at, taskQueue: 'q' }, [{ vmName: 'gpu1', createKey: 'k1' }]);
    await record(client, { at, taskQueue: 'q' }, [{ vmName: 'gpu2', wake: true }]);
    await record(client, { at, taskQueue: 'q' }, []);
    expect(sent.map((s) => s.wake ?? false)).toEqual([false, true, true]);
  });

  it('a failed signal rejects every caller that rode on it and is not remembered', async () => {
    let failing = true;
    const { sent, client } = countingClient(() => failing);
    const record = recordOnce({ owner: 'prod', now: () => 0 });
    const at = { cloud: 'fake', region: 'r1' };
    await expect(record(client, { at, taskQueue: 'q' }, ['gpu1'])).rejects.toThrow('server unavailable');
    failing = false;
    await record(client, { at, taskQueue: 'q' }, ['gpu1']);
    expect(sent).toEqual([{ workflowId: 'gpuprov-watch:prod:fake:r1', vmNames: ['gpu1'] }]);
  });

  it('create keys ride with their names; a new key of a name accepted moments ago is sent, the same key is not', async () => {
    const { sent, client } = countingClient(() => false);
    const record = recordOnce({ owner: 'prod', now: () => 0 });
    const at = { cloud: 'fake', region: 'r1' };
    await record(client, { at, taskQueue: 'q' }, [{ vmName: 'gpu1', createKey: 'k1' }]);
    await record(client, { at, taskQueue: 'q' }, [{ vmName: 'gpu1', createKey: 'k1' }]);
    await record(client, { at, taskQueue: 'q' }, [{ vmName: 'gpu1', createKey: 'k2' }]);
    expect(sent.map((s) => s.createKeys)).toEqual([[{ vmName: 'gpu1', createKey: 'k1' }], [{ vmName: 'gpu1', createKey: 'k2' }]]);
  });

  it('names go to their ledger pages; the watcher is only started and told the Ready and spot names', async () => {
    const { signals, starts, client } = countingClient(() => false);
    const record = recordOnce({ owner: 'prod', now: () => 0 });
    const at = { cloud: 'fake', region: 'r1' };
    const names = Array.from({ length: 40 }, (_, i) => ({ vmName: `vm${i}`, createKey: `k${i}`, ...(i === 3 ? { spot: true } : {}) }));
    await record(client, { at, taskQueue: 'q' }, names);
    const pages = signals.filter((s) => s.type === 'ledgerPageWorkflow');
    expect(pages.length).toBeGreaterThan(1);
    for (const p of pages) for (const n of p.rec.vmNames) expect(p.workflowId).toBe(ledgerPageId('prod', 'fake', 'r1', pageOf(n)));
    expect(pages.flatMap((p) => p.rec.vmNames).sort()).toEqual(names.map((n) => n.vmName).sort());
    expect(pages.flatMap((p) => p.rec.spotNames ?? [])).toEqual(['vm3']);
    const watcher = signals.filter((s) => s.type === 'accountWatcherWorkflow');
    expect(watcher).toEqual([
      { type: 'accountWatcherWorkflow', workflowId: 'gpuprov-watch:prod:fake:r1', rec: { vmNames: [], paged: true, spotNames: ['vm3'] } },
    ]);
    await record(client, { at, taskQueue: 'q' }, [{ vmName: 'vm7', wake: true }]);
    expect(signals.at(-1)?.rec).toEqual({ vmNames: ['vm7'], paged: true, wake: true });
    expect(starts).toEqual([]);
  });

  it('plain creates only make sure the watcher runs: a start joining the running one, no signal in its history', async () => {
    const { signals, starts, client } = countingClient(() => false);
    const record = recordOnce({ owner: 'prod', now: () => 0 });
    await record(client, { at: { cloud: 'fake', region: 'r1' }, taskQueue: 'q' }, [{ vmName: 'vm1', createKey: 'k1' }, 'vm2']);
    expect(signals.filter((s) => s.type === 'accountWatcherWorkflow')).toEqual([]);
    expect(starts).toEqual([{ type: 'accountWatcherWorkflow', workflowId: 'gpuprov-watch:prod:fake:r1', policy: 'USE_EXISTING' }]);
    expect(
      signals
        .filter((s) => s.type === 'ledgerPageWorkflow')
        .flatMap((s) => s.rec.vmNames)
        .sort(),
    ).toEqual(['vm1', 'vm2']);
  });
});
