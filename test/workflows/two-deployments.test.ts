/**
 * Two deployments (staging, prod) in one Temporal namespace and one local-cloud root, each with a
 * VM named `gpu1`: both launch, and tearing staging's down leaves prod's instance up.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import { deploymentFromEnv } from '../../src/providers/deployment';
import type { vmWorkflow } from '../../src/workflows';
import { statusQuery, teardownSignal } from '../../src/core/api';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, waitStage } from './helpers';

const haveSshd = existsSync('/usr/sbin/sshd');
const AT = { cloud: 'local', region: 'local-a' };

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('two deployments share a cloud account', () => {
  let root: string;
  const workers: TestWorker[] = [];
  const providers: Record<string, LocalProvider> = {};

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-two-deployments-'));
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    for (const name of ['staging', 'prod']) {
      // As the worker process does: GPUPROV_DEPLOYMENT over the namespace.
      const deployment = deploymentFromEnv({ GPUPROV_DEPLOYMENT: name }, testEnv().namespace);
      const provider = new LocalProvider({ root, deployment });
      providers[name] = provider;
      workers.push(await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([provider]), ssh, owner: deployment }) }));
    }
  });
  afterAll(async () => {
    for (const w of workers) await w.stop();
    for (const p of Object.values(providers)) await p.delete(AT, 'gpu1', []).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('both launch gpu1; staging downs its own; prod stays up', async () => {
    const client = await testEnv().client();
    const [staging, prod] = await Promise.all(
      workers.map((w, i) =>
        client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
          taskQueue: w.taskQueue,
          workflowId: `vm-gpu1-${i === 0 ? 'staging' : 'prod'}-${Date.now()}`,
          args: [{ spec: { name: 'gpu1' }, tuning: FAST }],
        }),
      ),
    );
    const [s, p] = await Promise.all([waitStage(staging!, 'ready', 60_000), waitStage(prod!, 'ready', 60_000)]);
    expect(countLive(root)).toBe(2);
    const prodObserved = await providers.prod!.observe(AT, 'gpu1');
    expect(prodObserved).toHaveLength(1);
    expect((await providers.staging!.observe(AT, 'gpu1')).map((o) => o.id)).not.toEqual(prodObserved.map((o) => o.id));
    expect(s.endpoint?.port).not.toBe(p.endpoint?.port);

    await staging!.signal(teardownSignal);
    expect((await staging!.result()).stage).toBe('terminated');
    expect(countLive(root)).toBe(1);
    expect(await providers.staging!.observe(AT, 'gpu1')).toEqual([]);
    const still = await providers.prod!.observe(AT, 'gpu1');
    expect(still.map((o) => [o.id, o.status])).toEqual([[prodObserved[0]!.id, 'Running']]);
    expect((await prod!.query(statusQuery)).stage).toBe('ready');

    await prod!.signal(teardownSignal);
    expect((await prod!.result()).stage).toBe('terminated');
    expect(countLive(root)).toBe(0);
  });
});
