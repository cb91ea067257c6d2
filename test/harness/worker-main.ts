/**
 * A gpuprov worker in its own process, for tests that kill and restart workers
 * (spawned by `worker-process.ts`). Everything comes from the environment:
 *   TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, GPUPROV_TASK_QUEUE   where to poll
 *   GPUPROV_FAKE_STATE=<file>      add the in-memory FakeProvider, its state kept in <file>
 *   GPUPROV_LOCAL_ROOT=<dir>       add the local cloud (GPUPROV_LOCAL_FAULTS = its fault file)
 *   GPUPROV_FAKE_PROBE=1           answer SSH probes without connecting (for FakeProvider endpoints)
 *   GPUPROV_SSH_DIR=<dir>          the worker's SSH key (default: a fresh temp dir)
 *   GPUPROV_WORKFLOWS_PATH=<file>  workflows module (default: src/workflows)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { SshProber } from '../../src/ssh';
import { LocalProvider } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import type { CloudProvider } from '../../src/core/provider';
import { connectWorker, createWorker, runUntilSignal } from '../../src/worker';
import { TASK_QUEUE } from '../../src/core/api';
import { FakeProvider } from './fake-provider';

const fakeProber: SshProber = async () => ({ fingerprint: 'SHA256:fake-host-key', hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeHostKeyForTests' });

async function main(env: NodeJS.ProcessEnv): Promise<void> {
  const providers: CloudProvider[] = [];
  const fake = env.GPUPROV_FAKE_STATE ? new FakeProvider({ stateFile: env.GPUPROV_FAKE_STATE }) : undefined;
  if (fake) providers.push(fake);
  if (env.GPUPROV_LOCAL_ROOT) providers.push(new LocalProvider({ root: env.GPUPROV_LOCAL_ROOT, faultsFile: env.GPUPROV_LOCAL_FAULTS }));
  const registry = new ProviderRegistry(providers);
  const conn = await connectWorker(env);
  const taskQueue = env.GPUPROV_TASK_QUEUE || TASK_QUEUE;
  const sshDir = env.GPUPROV_SSH_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-worker-keys-'));
  const ssh = await loadOrCreateSshIdentity(sshDir);
  const activities = createActivities({
    registry,
    ssh,
    owner: conn.namespace,
    // The FakeProvider's prober answers only for its Running instances (and takes scripted 'probe' faults).
    ...(env.GPUPROV_FAKE_PROBE === '1' ? { prober: fake ? fake.prober() : fakeProber } : {}),
  });
  const worker = await createWorker({
    connection: conn.connection,
    namespace: conn.namespace,
    taskQueue,
    activities,
    workflowsPath: env.GPUPROV_WORKFLOWS_PATH || undefined,
    workflowBundlePath: env.GPUPROV_WORKFLOW_BUNDLE || undefined,
  });
  await runUntilSignal(worker, conn, taskQueue, registry.names());
}

main(process.env).catch((err: unknown) => {
  process.stderr.write(`worker-main: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
