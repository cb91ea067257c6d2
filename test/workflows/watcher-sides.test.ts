/**
 * Side-resource orphans on the fake cloud: a VM name whose side resources outlived its workflow
 * (terminated after prepare, before create) is swept by the account watcher after the grace with
 * the adapter's `cleanup`; a Ready VM's side resources, and another deployment's of the same name,
 * are left alone.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { vmWorkflowId } from '../../src/core/api';
import { watcherRecordSignal, watcherStateQuery, type WatcherState } from '../../src/core/watcher-api';
import { watcherWorkflowId } from '../../src/core/watcher';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { vmWorkflow } from '../../src/workflows';
import { defaultFakeOffers, FakeProvider } from '../harness/fake-provider';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, waitFor, waitStage } from './helpers';

const GRACE_MS = 3_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!requireServer())('account watcher: side-resource orphans (fake cloud)', () => {
  const deployment = `test-sides-${randomUUID().slice(0, 8)}`;
  // Two deployments on one fake cloud (one state file), as the worker builds it: the adapter knows its deployment.
  const stateFile = join(mkdtempSync(join(tmpdir(), 'gpuprov-sides-cloud-')), 'fake.json');
  const fake = new FakeProvider({ stateFile, deployment, listsSides: true });
  const other = new FakeProvider({ stateFile, deployment: `${deployment}-other`, listsSides: true });
  let worker: TestWorker;

  beforeAll(async () => {
    const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-sides-keys-')));
    const activities = createActivities({
      registry: new ProviderRegistry([fake]),
      ssh,
      owner: deployment,
      prober: fake.prober(),
      watcher: { fastIntervalMs: 300, readyIntervalMs: 300, slowIntervalMs: 1_000, orphanGraceMs: GRACE_MS, heartbeatTimeoutMs: 4_000 },
    });
    worker = await startTestWorker({ activities });
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it("side resources with no instance and no workflow are swept after the grace; a Ready VM's and another deployment's are kept", async () => {
    const client = await testEnv().client();
    const kept = `kept-${randomUUID().slice(0, 6)}`;
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: `${vmWorkflowId(kept)}-${randomUUID().slice(0, 6)}`,
      args: [{ spec: { name: kept, clouds: ['fake'] }, tuning: { ...FAST, healthIntervalMs: 3_600_000 } }],
    });
    const ready = await waitStage(h, 'ready', 60_000);
    const region = ready.location!.region;
    const watcher = client.workflow.getHandle(watcherWorkflowId(deployment, 'fake', region));
    // A VM whose workflow was terminated between prepare and create: its create was recorded (as
    // the create activity records it before anything is made), and only its side resource is left.
    const left = `left-${randomUUID().slice(0, 6)}`;
    const offer = defaultFakeOffers().find((o) => o.region === region)!;
    await watcher.signal(watcherRecordSignal, { vmNames: [left] });
    await fake.prepare(offer, { vmName: left, owner: deployment, publicKeys: [], idempotencyKey: 'k', openPorts: [] });
    // Tagged with this deployment but never recorded (another install with the same id): unknown, kept.
    const stray = `stray-${randomUUID().slice(0, 6)}`;
    await fake.prepare(offer, { vmName: stray, owner: deployment, publicKeys: [], idempotencyKey: 'k', openPorts: [] });
    await other.prepare(offer, { vmName: left, owner: `${deployment}-other`, publicKeys: [], idempotencyKey: 'k', openPorts: [] });
    let state: WatcherState | undefined;
    for (let i = 0; i < 300 && !state?.sweeps.some((r) => r.vmName === left && r.ok); i++) {
      await sleep(100);
      state = await watcher.query(watcherStateQuery).catch(() => undefined);
    }
    const rec = state?.sweeps.find((r) => r.vmName === left);
    expect(rec).toMatchObject({ ok: true, by: 'grace', instanceIds: [], sideResources: [`fake-side:${left}@${region}@${deployment}`] });
    expect(Date.parse(rec!.sweptAt) - Date.parse(rec!.firstSeenAt)).toBeGreaterThanOrEqual(GRACE_MS);
    expect(fake.sideResources()).not.toContain(`${left}@${region}@${deployment}`);
    expect(fake.sideResources()).toContain(`${kept}@${region}@${deployment}`);
    expect(fake.sideResources()).toContain(`${left}@${region}@${deployment}-other`);
    expect(fake.sideResources()).toContain(`${stray}@${region}@${deployment}`);
    expect(state!.unknown?.map((u) => u.vmName)).toContain(stray);
    expect(state!.sweeps.map((r) => r.vmName)).not.toContain(stray);
    expect(state!.sweeps.map((r) => r.vmName)).not.toContain(kept);
    await h.signal('teardown');
    await waitFor(h, (s) => s.endedAt !== undefined, 'torn down', 60_000);
    await watcher.terminate('test over').catch(() => undefined);
  });
});
