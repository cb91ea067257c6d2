/**
 * A worker over one FakeProvider whose losses only the real account watcher reports (no backstop
 * health check within a test), for the spot preemption tests: its deployment id, the watcher
 * timings, the billed-instance sampler, and the watchers ended when the suite is over.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Tuning } from '../../src/core/tuning';
import { watcherWorkflowId } from '../../src/core/watcher';
import type { WatcherTuning } from '../../src/core/watcher-api';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { FakeProvider } from '../harness/fake-provider';
import { startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST } from './helpers';

/** VM tuning under which only the account watcher reports a loss. */
export const QUIET: Partial<Tuning> = { ...FAST, healthIntervalMs: 3_600_000 };

export interface WatchedFake {
  worker: TestWorker;
  deployment: string;
  /** End the fake's watchers (fake-a, fake-b) and the worker. */
  stop(): Promise<void>;
}

export async function startWatchedFake(fake: FakeProvider, prefix: string, watcher: Partial<WatcherTuning>): Promise<WatchedFake> {
  const deployment = `${prefix}-${randomUUID().slice(0, 8)}`;
  const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), `gpuprov-${prefix}-`)));
  const worker = await startTestWorker({ deps: { registry: new ProviderRegistry([fake]), ssh, prober: fake.prober(), owner: deployment, watcher } });
  return {
    worker,
    deployment,
    stop: async () => {
      const client = await testEnv().client();
      for (const region of ['fake-a', 'fake-b'])
        await client.workflow
          .getHandle(watcherWorkflowId(deployment, 'fake', region))
          .terminate('test over')
          .catch(() => undefined);
      await worker.stop();
    },
  };
}

/** The most instances of `name` the fake bills at once, sampled every 20 ms until stopped. */
export function sampleBilled(fake: FakeProvider, name: string): { stop(): number } {
  let max = 0;
  const timer = setInterval(() => (max = Math.max(max, fake.billed(name).length)), 20);
  return {
    stop: () => {
      clearInterval(timer);
      return max;
    },
  };
}
