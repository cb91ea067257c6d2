/**
 * Two workers ("hosts") on one task queue. Worker A creates the VM; A then stops and worker B
 * runs the SSH probe. With different keys B fails the probe at once (WorkerKeyMismatch, one
 * attempt, never connecting) and the launch ends naming the fix; with the same deployment key
 * (both from GPUPROV_SSH_KEY_FILE) B's probe succeeds and the VM records that key's fingerprint.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { teardownSignal, vmWorkflowId } from '../../src/core/api';
import type { Location, Observed } from '../../src/core/provider';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadWorkerIdentity, type SshIdentity, type SshProber } from '../../src/ssh';
import { generateEd25519 } from '../../src/ssh/keygen';
import type { vmWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, status, waitStage } from './helpers';

/** A FakeProvider whose instances look Pending until `boot()`: the test picks which worker sees them run. */
class GatedBoot extends FakeProvider {
  private booted = false;
  boot(): void {
    this.booted = true;
  }
  override async observe(at: Location, vmName: string): Promise<Observed[]> {
    const seen = await super.observe(at, vmName);
    return this.booted
      ? seen
      : seen.map((o): Observed => ({
          id: o.id,
          status: o.status === 'Running' ? 'Pending' : o.status,
          location: o.location,
          ...(o.instanceType ? { instanceType: o.instanceType } : {}),
        }));
  }
}

interface Host {
  worker: TestWorker;
  ssh: SshIdentity;
  /** Probes this worker's prober was asked to run (it only runs after the key check). */
  probes: number;
}

/** A key file as an operator would make one (0600). */
function deploymentKeyFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gpuprov-deploy-')), 'gpuprov-deploy-key');
  writeFileSync(file, generateEd25519('gpuprov-deploy').private, { mode: 0o600 });
  return file;
}

describe.skipIf(!requireServer())('workers on several hosts: the deployment SSH key', () => {
  const running: TestWorker[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => w.stop()));
  });

  /** A worker as on its own host: its own state directory, the key from GPUPROV_SSH_KEY_FILE. */
  async function host(fake: FakeProvider, taskQueue: string, keyFile: string): Promise<Host> {
    const ssh = await loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: keyFile }, mkdtempSync(join(tmpdir(), 'gpuprov-host-state-')));
    const probe = fake.prober();
    const h: Host = { ssh, probes: 0, worker: undefined as unknown as TestWorker };
    const prober: SshProber = (target, id, ms) => {
      h.probes += 1;
      return probe(target, id, ms);
    };
    h.worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([fake]), ssh, owner: 'default', prober }), taskQueue });
    running.push(h.worker);
    return h;
  }

  /** A creates the VM; once it is booting, A stops, B starts and the instance comes up: B probes. */
  async function createOnAProbeOnB(keyA: string, keyB: string): Promise<{ h: WorkflowHandle<typeof vmWorkflow>; a: Host; b: Host; fake: GatedBoot }> {
    const fake = new GatedBoot();
    const taskQueue = `test-keys-${randomUUID()}`;
    const a = await host(fake, taskQueue, keyA);
    const client = await testEnv().client();
    const name = `keys${randomUUID().slice(0, 6)}`;
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue,
      workflowId: `${vmWorkflowId(name)}-${randomUUID().slice(0, 6)}`,
      args: [{ spec: { name }, tuning: FAST }],
    });
    await waitStage(h, 'booting');
    await a.worker.stop();
    const b = await host(fake, taskQueue, keyB);
    fake.boot();
    return { h, a, b, fake };
  }

  it('different keys: the probe on the other worker fails at once with WorkerKeyMismatch, naming the fix', async () => {
    const { h, a, b, fake } = await createOnAProbeOnB(deploymentKeyFile(), deploymentKeyFile());
    expect(a.ssh.fingerprint).not.toBe(b.ssh.fingerprint);
    await expect(h.result()).rejects.toThrow();
    const s = await status(h);
    const fix = `this worker's SSH key ${b.ssh.fingerprint} is not the deployment key ${a.ssh.fingerprint} that created VM ${s.name}; give every worker the same GPUPROV_SSH_KEY_FILE`;
    expect(s.stage).toBe('failed');
    expect(s.error?.kind).toBe('Credentials');
    expect(s.error?.message).toContain(fix);
    // One attempt: another offer cannot fix the keys. It was compensated; nothing is left.
    expect(s.attempts).toHaveLength(1);
    expect(s.attempts[0]).toMatchObject({ phase: 'connect', kind: 'Credentials', compensated: true });
    expect(fake.liveCount()).toBe(0);
    expect(a.probes + b.probes).toBe(0);

    // The probe activity ran once and failed for good with the new type.
    const events = (await h.fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'probeSsh');
    const sid = String(scheduled?.eventId);
    const started = events.filter((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === sid);
    const failed = events.filter((e) => String(e.activityTaskFailedEventAttributes?.scheduledEventId) === sid);
    expect(started.map((e) => e.activityTaskStartedEventAttributes?.attempt)).toEqual([1]);
    expect(failed).toHaveLength(1);
    const failure = failed[0]!.activityTaskFailedEventAttributes!.failure!;
    expect(failure.applicationFailureInfo).toMatchObject({ type: 'WorkerKeyMismatch', nonRetryable: true });
    expect(failure.message).toContain(fix);
  });

  it('the same key from GPUPROV_SSH_KEY_FILE: the launch works on whichever worker probes, and the VM records the key', async () => {
    const shared = deploymentKeyFile();
    const { h, a, b, fake } = await createOnAProbeOnB(shared, shared);
    expect(b.ssh.fingerprint).toBe(a.ssh.fingerprint);
    const s = await waitStage(h, 'ready');
    expect(s.workerKeyFingerprint).toBe(a.ssh.fingerprint);
    expect(s.attempts).toHaveLength(1);
    expect({ a: a.probes, b: b.probes > 0 }).toEqual({ a: 0, b: true });
    await h.signal(teardownSignal);
    expect((await h.result()).stage).toBe('terminated');
    expect(fake.liveCount()).toBe(0);
  });
});
