/**
 * A gpuprov worker in its own process, for tests that kill and restart workers
 * (spawned by `worker-process.ts`), built by `buildWorker` like the real one. Everything comes
 * from the environment:
 *   TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, GPUPROV_TASK_QUEUE   where to poll
 *   GPUPROV_FAKE_STATE=<file>      add the in-memory FakeProvider, its state kept in <file>
 *   GPUPROV_LOCAL_ROOT=<dir>       add the local cloud (GPUPROV_LOCAL_FAULTS = its fault file)
 *   GPUPROV_DEPLOYMENT=<id>        the fake and local clouds' deployment and the activities' owner (default: the namespace)
 *   GPUPROV_FAKE_PROBE=1           answer SSH probes without connecting (for FakeProvider endpoints)
 *   GPUPROV_SSH_DIR=<dir>          the worker's SSH key (default: a fresh temp dir)
 *   GPUPROV_WORKFLOWS_PATH=<file>  workflows module, bundled here (default: the prebuilt bundle …
 *   GPUPROV_WORKFLOW_BUNDLE=<file> … in this file, else built or found in the cache)
 *   GPUPROV_WORKER_VERSIONING=1    run as a Worker Deployment Version (needs GPUPROV_WORKFLOW_BUNDLE; src/core/versioning.ts)
 *   GPUPROV_ACTIVITY_INTERCEPTORS=<module>  a test module exporting `activityInterceptors`
 *                                  (ActivityInterceptorsFactory[]), e.g. the chaos kit's broken build
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { SshProber } from '../../src/ssh';
import { LocalProvider } from '../../src/providers/local';
import { deploymentFromEnv } from '../../src/providers/deployment';
import { ProviderRegistry } from '../../src/providers/registry';
import type { CloudProvider } from '../../src/core/provider';
import { buildWorker, type WorkflowSource } from '../../src/worker';
import { workerVersioning } from '../../src/server/worker-versioning';
import { connectWorker, runUntilSignal, taskQueueFromEnv } from '../../src/worker-process';
import { FakeProvider } from './fake-provider';

const fakeProber: SshProber = async () => ({ fingerprint: 'SHA256:fake-host-key', hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeHostKeyForTests' });

function workflowsFrom(env: NodeJS.ProcessEnv): WorkflowSource | undefined {
  if (env.GPUPROV_WORKFLOWS_PATH) return { workflowsPath: env.GPUPROV_WORKFLOWS_PATH };
  if (env.GPUPROV_WORKFLOW_BUNDLE) return { bundlePath: env.GPUPROV_WORKFLOW_BUNDLE };
  return undefined;
}

async function activityInterceptorsFrom(env: NodeJS.ProcessEnv): Promise<ActivityInterceptorsFactory[] | undefined> {
  if (!env.GPUPROV_ACTIVITY_INTERCEPTORS) return undefined;
  const mod = (await import(env.GPUPROV_ACTIVITY_INTERCEPTORS)) as { activityInterceptors?: ActivityInterceptorsFactory[] };
  if (!mod.activityInterceptors) throw new Error(`${env.GPUPROV_ACTIVITY_INTERCEPTORS} exports no activityInterceptors`);
  return mod.activityInterceptors;
}

async function main(env: NodeJS.ProcessEnv): Promise<void> {
  const providers: CloudProvider[] = [];
  const conn = await connectWorker(env);
  const deployment = deploymentFromEnv(env, conn.namespace);
  // Owner-aware like every adapter: two deployments' workers may share one fake cloud (the chaos kit).
  // GPUPROV_FAKE_LISTS_SIDES=1: it lists its side resources like aws/gcp/digitalocean/verda/nebius (`sideInventory`), so the watcher sweeps them.
  const listsSides = env.GPUPROV_FAKE_LISTS_SIDES === '1';
  const fake = env.GPUPROV_FAKE_STATE ? new FakeProvider({ stateFile: env.GPUPROV_FAKE_STATE, deployment, listsSides }) : undefined;
  if (fake) providers.push(fake);
  if (env.GPUPROV_LOCAL_ROOT) providers.push(new LocalProvider({ root: env.GPUPROV_LOCAL_ROOT, faultsFile: env.GPUPROV_LOCAL_FAULTS, deployment }));
  const registry = new ProviderRegistry(providers);
  const taskQueue = taskQueueFromEnv(env);
  const sshDir = env.GPUPROV_SSH_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-worker-keys-'));
  const ssh = await loadOrCreateSshIdentity(sshDir);
  const workflows = workflowsFrom(env);
  const activity = await activityInterceptorsFrom(env);
  // GPUPROV_WORKER_VERSIONING=1 (with GPUPROV_WORKFLOW_BUNDLE): a Worker Deployment Version, as src/worker.ts runs it.
  const versioning = workflows && 'bundlePath' in workflows ? workerVersioning(env, taskQueue, await workflows.bundlePath) : undefined;
  const worker = await buildWorker({
    connection: conn.connection,
    namespace: conn.namespace,
    taskQueue,
    // The FakeProvider's prober answers only for its Running instances (and takes scripted 'probe' faults).
    deps: { registry, ssh, owner: deployment, ...(env.GPUPROV_FAKE_PROBE === '1' ? { prober: fake ? fake.prober() : fakeProber } : {}) },
    ...(workflows ? { workflows } : {}),
    ...(activity ? { interceptors: { activity } } : {}),
    ...(versioning ? { versioning } : {}),
    env,
  });
  await runUntilSignal(worker, conn, taskQueue, registry.names());
}

main(process.env).catch((err: unknown) => {
  process.stderr.write(`worker-main: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
