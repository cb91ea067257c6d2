/**
 * GCP through the launch workflow: an insert whose zone operation fails late with
 * ZONE_RESOURCE_POOL_EXHAUSTED fails its attempt with kind Capacity (the adapter waits on the
 * operation within the attempt), the zone is blocked, and the next zone comes up Ready.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import type { LaunchResult } from '../../src/core/api';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity, type SshProber } from '../../src/ssh';
import type { launchWorkflow, teardownWorkflow } from '../../src/workflows';
import { requireServer, startTestWorker, testEnv } from '../harness/temporal';
import { startGcpDouble } from '../providers/gcp/double';
import { FAST } from './helpers';

const stubProbe: SshProber = async (t) => ({
  fingerprint: `SHA256:stand-in-${t.host}-${t.port}`,
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStandInHostKeyForFixtures',
});

describe.skipIf(!requireServer())('GCP late stockout through the workflow', () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
  });

  it('late ZONE_RESOURCE_POOL_EXHAUSTED → attempt fails Capacity → next zone → ready; teardown leaves nothing', async () => {
    const gcp = await startGcpDouble();
    closers.push(() => gcp.close());
    const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-gcp-late-keys-')));
    const w = await startTestWorker({
      activities: createActivities({ registry: new ProviderRegistry([gcp.provider]), ssh, owner: 'default', prober: stubProbe }),
    });
    closers.push(() => w.stop());
    gcp.armZone('us-central1-a', 'exhausted', 3);

    const client = await testEnv().client();
    const spec = { name: 'gcplate1', gpu: { model: 'T4', count: 1 }, clouds: ['gcp'], k8s: 'off' as const };
    const r: LaunchResult = await client.workflow.execute<typeof launchWorkflow>('launchWorkflow', {
      taskQueue: w.taskQueue,
      workflowId: `launch-gcplate1-${randomUUID().slice(0, 6)}`,
      args: [{ spec, tuning: FAST }],
    });
    expect(r.attempts.map((a) => [a.offer.zone, a.outcome, a.kind ?? null])).toEqual([
      ['us-central1-a', 'failed', 'Capacity'],
      ['us-central1-b', 'ready', null],
    ]);
    // The failure came from the operation, within the create attempt: the insert in zone a was
    // waited on, and no observation of zone a was needed to find out.
    const log = gcp.server.http.log;
    expect(log.filter((q) => q.method === 'POST' && /\/zones\/us-central1-a\/operations\/[^/]+\/wait$/.test(q.path)).length).toBe(4);
    expect(r.location).toMatchObject({ cloud: 'gcp', zone: 'us-central1-b' });

    await client.workflow.execute<typeof teardownWorkflow>('teardownWorkflow', {
      taskQueue: w.taskQueue,
      workflowId: `teardown-gcplate1-${randomUUID().slice(0, 6)}`,
      args: [{ target: { at: r.location, vmName: spec.name, instanceIds: [r.instanceId], mode: 'full', pollIntervalMs: 200 }, tuning: FAST }],
    });
    expect(await gcp.countLive()).toBe(0);
  });
});
