/**
 * The ledger in pages on a real server: a name recorded in its page (as creates record it) and a
 * name a watcher carried from before the pages (handed over by its first look) are both swept
 * after the grace; a tagged name recorded nowhere stays unknown; the handed-over name then lives
 * in its page and the watcher keeps none.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { ledgerEvidenceQuery } from '../../src/core/ledger-api';
import { LEDGER_PAGES, ledgerPageId, pageOf, type LedgerPageInput } from '../../src/core/ledger-pages';
import { watcherRecordSignal, watcherStateQuery, type WatcherState } from '../../src/core/watcher-api';
import { watcherWorkflowId, type WatcherInput } from '../../src/core/watcher';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { defaultFakeOffers, FakeProvider } from '../harness/fake-provider';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';

const GRACE_MS = 2_000;
const TUNING = { fastIntervalMs: 300, readyIntervalMs: 300, slowIntervalMs: 500, orphanGraceMs: GRACE_MS, heartbeatTimeoutMs: 4_000 };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!requireServer())('account watcher: the ledger in pages (fake cloud)', () => {
  const deployment = `test-pages-${randomUUID().slice(0, 8)}`;
  const fake = new FakeProvider({ deployment });
  const offer = defaultFakeOffers()[0]!;
  const region = offer.region;
  let worker: TestWorker;

  beforeAll(async () => {
    const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-pages-keys-')));
    const activities = createActivities({
      registry: new ProviderRegistry([fake]),
      ssh,
      owner: deployment,
      prober: fake.prober(),
      watcher: TUNING,
    });
    worker = await startTestWorker({ activities });
  });
  afterAll(async () => {
    const client = await testEnv().client();
    await client.workflow
      .getHandle(watcherWorkflowId(deployment, 'fake', region))
      .terminate('test over')
      .catch(() => undefined);
    for (let p = 0; p < LEDGER_PAGES; p++)
      await client.workflow
        .getHandle(ledgerPageId(deployment, 'fake', region, p))
        .terminate('test over')
        .catch(() => undefined);
    await worker?.stop();
  });

  it('a paged record and a carried ledger are both evidence; the carried one moves to its page', async () => {
    const client = await testEnv().client();
    const id = randomUUID().slice(0, 6);
    const [paged, carried, stray] = [`paged-${id}`, `carried-${id}`, `stray-${id}`];
    const spec = (vmName: string) => ({ vmName, owner: deployment, publicKeys: [], idempotencyKey: `k-${vmName}`, openPorts: [] });
    for (const n of [paged, carried, stray]) await fake.create(offer, {}, spec(n));
    // As a create records it: in its page, by signal-with-start.
    await client.workflow.signalWithStart('ledgerPageWorkflow', {
      workflowId: ledgerPageId(deployment, 'fake', region, pageOf(paged)),
      taskQueue: worker.taskQueue,
      args: [{ deployment, cloud: 'fake', region, page: pageOf(paged) } satisfies LedgerPageInput],
      signal: watcherRecordSignal,
      signalArgs: [{ vmNames: [paged] }],
    });
    // A watcher continued as new by a version before the pages: its ledger rides in its input.
    const now = Date.now();
    const input: WatcherInput = {
      deployment,
      cloud: 'fake',
      region,
      tuning: TUNING,
      carried: { orphans: [], ledger: [{ vmName: carried, recordedAtMs: now, seenAtMs: now }], sweeps: [], cycles: 0 },
    };
    const watcher = await client.workflow.start('accountWatcherWorkflow', {
      workflowId: watcherWorkflowId(deployment, 'fake', region),
      taskQueue: worker.taskQueue,
      args: [input],
    });
    let state: WatcherState | undefined;
    const swept = (n: string) => state?.sweeps.some((r) => r.vmName === n && r.ok);
    for (let i = 0; i < 300 && !(swept(paged) && swept(carried)); i++) {
      await sleep(100);
      state = await watcher.query(watcherStateQuery).catch(() => undefined);
    }
    expect(state, JSON.stringify(state)).toBeDefined();
    expect(swept(paged), JSON.stringify(state)).toBe(true);
    expect(swept(carried)).toBe(true);
    expect(state!.unknown?.map((u) => u.vmName)).toEqual([stray]);
    expect(fake.live(paged)).toHaveLength(0);
    expect(fake.live(carried)).toHaveLength(0);
    expect(fake.live(stray)).toHaveLength(1);
    const page = client.workflow.getHandle(ledgerPageId(deployment, 'fake', region, pageOf(carried)));
    expect(await page.query(ledgerEvidenceQuery, [carried])).toEqual([{ vmName: carried }]);
    // The watcher's own ledger was handed over: what it reports is the pages'.
    await watcher.signal(watcherRecordSignal, { vmNames: [], paged: true, wake: true });
    await sleep(1_000);
    const { ledger } = await watcher.query(watcherStateQuery);
    expect(ledger).toBe(2);
  });
});
