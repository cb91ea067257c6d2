/**
 * `--recover` on the local cloud (real sshd): an instance killed behind the product's back is
 * reported by the account watcher (shrunk cadence), torn down, and the VM is Ready again under the
 * same name on a new instance.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { teardownSignal } from '../../src/core/api';
import { watcherWorkflowId } from '../../src/core/watcher';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { vmWorkflow } from '../../src/workflows';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, waitFor, waitStage } from './helpers';

const haveSshd = existsSync('/usr/sbin/sshd');

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('--recover on the local cloud', () => {
  let root: string;
  let worker: TestWorker;
  const deployment = `test-recover-${randomUUID().slice(0, 8)}`;
  const name = `rec-${randomUUID().slice(0, 6)}`;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-recover-'));
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const activities = createActivities({
      registry: new ProviderRegistry([new LocalProvider({ root })]),
      ssh,
      owner: deployment,
      watcher: { fastIntervalMs: 500, readyIntervalMs: 500, slowIntervalMs: 2_000, orphanGraceMs: 60_000 },
    });
    worker = await startTestWorker({ activities });
  });
  afterAll(async () => {
    const client = await testEnv().client();
    await client.workflow
      .getHandle(watcherWorkflowId(deployment, 'local', 'local-a'))
      .terminate('test over')
      .catch(() => undefined);
    await worker?.stop();
    await new LocalProvider({ root }).delete({ cloud: 'local', region: 'local-a' }, name, []).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  const instanceDirs = (): string[] => (existsSync(join(root, 'instances')) ? readdirSync(join(root, 'instances')) : []);

  it("a killed instance's VM is Ready again under the same name on a new instance", async () => {
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: `vm-${name}`,
      // No per-VM health check within the test: the account watcher notices the loss.
      args: [{ spec: { name, recover: true }, tuning: { ...FAST, healthIntervalMs: 3_600_000 } }],
    });
    const first = await waitStage(h, 'ready', 60_000);
    const oldId = first.instanceIds[0]!;
    const pid = Number(readFileSync(join(root, 'instances', oldId, 'pid'), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    const again = await waitFor(h, (s) => s.stage === 'ready' && s.recovered?.count === 1, 'ready again after the loss', 90_000);
    expect(again.name).toBe(name);
    expect(again.instanceIds).toHaveLength(1);
    expect(again.instanceIds[0]).not.toBe(oldId);
    expect(again.recovered?.lastReason).toBeTruthy();
    expect(instanceDirs()).toEqual(again.instanceIds);
    expect(countLive(root)).toBe(1);
    await h.signal(teardownSignal);
    expect((await h.result()).stage).toBe('terminated');
    expect(countLive(root)).toBe(0);
    expect(instanceDirs()).toEqual([]);
  });
});
