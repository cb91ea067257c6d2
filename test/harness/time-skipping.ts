/**
 * Temporal's time-skipping test server for workflow tests whose timers span days (a capacity
 * block three days ahead): `TestWorkflowEnvironment.createTimeSkipping` on the server that
 * scripts/temporal-test-server.sh fetches (GPUPROV_TEST_SERVER names another), and a gpuprov
 * worker on it (`buildWorker`, the prebuilt workflow bundle). Guard suites with `timeSkippingServer()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../src/core/api';
import { watcherWorkflowId } from '../../src/core/watcher';
import type { ActivityDeps } from '../../src/activities';
import { freePort } from '../../src/ports';
import { buildWorker, runInBackground } from '../../src/worker';
import { requireTool } from './temporal';

const VERSION = '1.31.0';

/** The launcher of the test server, or undefined (the suite skips; GPUPROV_REQUIRE_ALL=1 fails it). */
export function timeSkippingServer(): string | undefined {
  const cache = process.env.GPUPROV_CACHE_DIR || join(homedir(), '.cache', 'gpuprov');
  const path = process.env.GPUPROV_TEST_SERVER || join(cache, `temporal-test-server-${VERSION}`, 'temporal-test-server');
  return requireTool('Temporal time-skipping test server', existsSync(path), 'bash scripts/temporal-test-server.sh') ? path : undefined;
}

export interface SkippingLab {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  /**
   * End the account watcher of `cloud`/`region`: the test server has no visibility list, so its
   * cycles fail and retry on short timers, which would fill days of skipped time.
   */
  quietWatcher(cloud: string, region: string): Promise<void>;
  stop(): Promise<void>;
}

const DEPLOYMENT = 'skipping';

/**
 * The test server and a worker on a fresh task queue, without the Ready VM's watcher nudge
 * (`ensureWatcher`; see `quietWatcher`).
 */
export async function startSkipping(server: string, deps: Omit<ActivityDeps, 'owner'>): Promise<SkippingLab> {
  const { env, child } = await startServer(server);
  // The VM workflows index themselves by gpuprov's search attributes, as on the dev server.
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((n) => [n, keyword])),
  });
  const taskQueue = `skip-${randomUUID()}`;
  const { createActivities } = await import('../../src/activities');
  const activities = { ...createActivities({ ...deps, owner: DEPLOYMENT }), ensureWatcher: async () => undefined };
  const worker = await buildWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    activities,
    clouds: deps.registry.names(),
  });
  const running = await runInBackground(worker);
  return {
    env,
    taskQueue,
    quietWatcher: async (cloud, region) => {
      await env.client.workflow
        .getHandle(watcherWorkflowId(DEPLOYMENT, cloud, region))
        .terminate('time-skipping test: no visibility list')
        .catch(() => undefined);
    },
    stop: async () => {
      await running.stop();
      await env.teardown();
      child.kill('SIGTERM');
    },
  };
}

/**
 * A clock for the fake cloud that follows the test server's time: inside an activity, the time
 * the server scheduled it (skipped time included); elsewhere the last such time seen.
 */
export function serverClock(): () => number {
  let last = Date.now();
  return () => {
    try {
      last = Context.current().info.currentAttemptScheduledTimestampMs;
    } catch {
      // not in an activity
    }
    return last;
  };
}

/** True once something accepts TCP connections on `port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port }, () => {
      sock.end();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });
}

/**
 * Hazard: `createTimeSkipping` gives the server 5 s to listen, and a JVM on a busy machine takes
 * longer; so the server is started here (bounded wait) and the environment connects to it with
 * the test service on, as `createTimeSkipping` does (its `create` is not public API: pinned SDK 1.24).
 */
async function startServer(server: string): Promise<{ env: TestWorkflowEnvironment; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(server, [String(port)], { stdio: 'ignore' });
  for (let i = 0; i < 600 && !(await listening(port)); i++) {
    if (child.exitCode !== null) throw new Error(`the time-skipping test server exited (${child.exitCode})`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const create = (TestWorkflowEnvironment as unknown as { create(o: object): Promise<TestWorkflowEnvironment> }).create.bind(TestWorkflowEnvironment);
  const env = await create({ server: { type: 'existing' }, supportsTimeSkipping: true, namespace: 'default', address: `127.0.0.1:${port}` });
  return { env, child };
}
