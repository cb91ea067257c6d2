import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity, type SshKeyFile } from '../../src/ssh';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import type { vmWorkflow } from '../../src/workflows';
import { teardownSignal } from '../../src/core/api';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, waitStage } from './helpers';

const haveSshd = existsSync('/usr/sbin/sshd');

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('launch on the local cloud (real sshd)', () => {
  let root: string;
  let worker: TestWorker;
  let ssh: SshKeyFile;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-localcloud-'));
    ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const activities = createActivities({ registry: new ProviderRegistry([new LocalProvider({ root })]), ssh, owner: 'default' });
    worker = await startTestWorker({ activities });
  });
  afterAll(async () => {
    await worker?.stop();
    await new LocalProvider({ root }).delete({ cloud: 'local', region: 'local-a' }, 'lc1', []).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('launch → ssh runs a command → teardown → no sshd left', async () => {
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: `vm-lc1-${Date.now()}`,
      args: [{ spec: { name: 'lc1' }, tuning: FAST }],
    });
    const s = await waitStage(h, 'ready', 60_000);
    expect(s.location?.cloud).toBe('local');
    expect(s.k8s?.note).toContain('k3s skipped');
    expect(countLive(root)).toBe(1);
    const ep = s.endpoint!;
    const out = execFileSync(
      'ssh',
      [
        '-p',
        String(ep.port),
        '-i',
        ssh.privateKeyPath,
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'BatchMode=yes',
        `${ep.user}@${ep.host}`,
        'echo hello-from-$((6*7))',
      ],
      { encoding: 'utf8' },
    );
    expect(out.trim()).toBe('hello-from-42');
    // The fingerprint the worker pinned is the one the instance's sshd presents.
    const scanned = execFileSync('ssh-keyscan', ['-p', String(ep.port), '-t', 'ed25519', '127.0.0.1'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    expect(scanned).toContain(s.hostKey!.split(' ')[1]);

    await h.signal(teardownSignal);
    const end = await h.result();
    expect(end.stage).toBe('terminated');
    expect(countLive(root)).toBe(0);
  });
});
