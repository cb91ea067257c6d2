/**
 * The lifecycle workflows against real adapters and their test doubles (vendor fixture servers,
 * moto for AWS). The instances behind the doubles have no sshd, so only the SSH probe is answered
 * by a stand-in; every cloud call is the adapter's real one.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { SshProber } from '../../src/ssh';
import { ProviderRegistry } from '../../src/providers/registry';
import type { CloudProvider } from '../../src/core/provider';
import type { launchWorkflow, teardownWorkflow } from '../../src/workflows';
import type { LaunchResult, VmSpec } from '../../src/core/api';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST } from './helpers';
import { startLambdaDouble } from '../providers/lambda/double';
import { startRunPodDouble } from '../providers/runpod/double';
import { startPrimeIntellectDouble } from '../providers/primeintellect/double';
import { startGcpDouble } from '../providers/gcp/double';
import { startAwsDouble } from '../providers/aws/double';
import { motoMissing } from '../harness/moto';

const stubProbe: SshProber = async (t) => ({
  fingerprint: `SHA256:stand-in-${t.host}-${t.port}`,
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStandInHostKeyForFixtures',
});

async function workerFor(providers: CloudProvider[]): Promise<TestWorker> {
  const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-clouds-keys-')));
  return startTestWorker({ activities: createActivities({ registry: new ProviderRegistry(providers), ssh, owner: 'default', prober: stubProbe }) });
}

async function launchThenTeardown(w: TestWorker, spec: VmSpec): Promise<LaunchResult> {
  const client = await testEnv().client();
  const result = await client.workflow.execute<typeof launchWorkflow>('launchWorkflow', {
    taskQueue: w.taskQueue,
    workflowId: `launch-${spec.name}-${randomUUID().slice(0, 6)}`,
    args: [{ spec, tuning: FAST }],
  });
  await client.workflow.execute<typeof teardownWorkflow>('teardownWorkflow', {
    taskQueue: w.taskQueue,
    workflowId: `teardown-${spec.name}-${randomUUID().slice(0, 6)}`,
    args: [{ target: { at: result.location, vmName: spec.name, instanceIds: [result.instanceId], mode: 'full', pollIntervalMs: 200 }, tuning: FAST }],
  });
  return result;
}

describe.skipIf(!requireServer())('launch across real adapters on the dev server', () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
  });

  it('fails over across clouds: Lambda out of capacity → RunPod quota → Prime Intellect ready; teardown leaves zero everywhere', async () => {
    const [lambda, runpod, pi] = await Promise.all([startLambdaDouble(), startRunPodDouble(), startPrimeIntellectDouble()]);
    closers.push(
      () => lambda.close(),
      () => runpod.close(),
      () => pi.close(),
    );
    const w = await workerFor([lambda.provider, runpod.provider, pi.provider]);
    closers.push(() => w.stop());
    await lambda.arm('Capacity', 'create');
    await runpod.arm('Quota', 'create');

    const r = await launchThenTeardown(w, { name: 'xcloud1', gpu: { model: 'H100', count: 1 }, clouds: ['lambda', 'runpod', 'primeintellect'], k8s: 'off' });
    expect(r.attempts.map((a) => [a.offer.cloud, a.outcome, a.kind ?? null])).toEqual([
      ['lambda', 'failed', 'Capacity'],
      ['runpod', 'failed', 'Quota'],
      ['primeintellect', 'ready', null],
    ]);
    expect(r.attempts.slice(0, 2).every((a) => a.compensated)).toBe(true);
    expect(r.location.cloud).toBe('primeintellect');
    expect(r.endpoint.port).toBeGreaterThan(0);
    expect([await lambda.countLive(), await runpod.countLive(), await pi.countLive()]).toEqual([0, 0, 0]);
  });

  it('GCP: zone A exhausted → zone B ready, through the workflow', async () => {
    const gcp = await startGcpDouble();
    closers.push(() => gcp.close());
    const w = await workerFor([gcp.provider]);
    closers.push(() => w.stop());
    gcp.armZone('us-central1-a', 'exhausted');
    const r = await launchThenTeardown(w, { name: 'gcpz1', gpu: { model: 'T4', count: 1 }, clouds: ['gcp'], k8s: 'off' });
    expect(r.attempts.map((a) => [a.offer.zone, a.outcome, a.kind ?? null])).toEqual([
      ['us-central1-a', 'failed', 'Capacity'],
      ['us-central1-b', 'ready', null],
    ]);
    expect(await gcp.countLive()).toBe(0);
  });

  it.skipIf(motoMissing())('AWS on moto: launch → teardown; a RunInstances whose response is lost is adopted, not duplicated', async () => {
    const aws = await startAwsDouble();
    closers.push(() => aws.close());
    const w = await workerFor([aws.provider]);
    closers.push(() => w.stop());
    aws.armLostResponse('RunInstances');
    const r = await launchThenTeardown(w, { name: 'aws1', gpu: { model: 'T4', count: 1 }, clouds: ['aws'], k8s: 'off' });
    expect(r.location).toMatchObject({ cloud: 'aws', region: 'us-east-1' });
    expect(r.attempts.map((a) => a.outcome)).toEqual(['ready']);
    expect(aws.sent.filter((c) => c.command === 'RunInstances')).toHaveLength(1);
    expect(await aws.countLive()).toBe(0);
  });
});
