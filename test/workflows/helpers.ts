/** Shared setup for lifecycle workflow tests: a FakeProvider, a worker on the run's dev server (`buildWorker`), fast timings. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { ProviderRegistry } from '../../src/providers/registry';
import type { CloudProvider } from '../../src/core/provider';
import { statusQuery, vmWorkflowId, type Stage, type VmSpec, type VmStatus } from '../../src/core/api';
import type { Tuning } from '../../src/core/tuning';
import type { vmWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import type { SshProber } from '../../src/ssh';
import { fleetStatusQuery, type FleetStatus } from '../../src/core/fleet-api';

/** Timings small enough for tests; the logic is the production one. */
export const FAST: Partial<Tuning> = {
  mutateMaxAttempts: 3,
  mutateInitialIntervalMs: 100,
  goneDeadlineMs: 5_000,
  leakBackoffMs: 60_000,
  healthIntervalMs: 500,
  retryUntilUpDelayMs: 1_000,
};

export interface Lab {
  fake: FakeProvider;
  worker: TestWorker;
  start(spec: Partial<VmSpec> & { name?: string }, tuning?: Partial<Tuning>): Promise<WorkflowHandle<typeof vmWorkflow>>;
  stop(): Promise<void>;
}

export async function startLab(o: { providers?: CloudProvider[]; prober?: SshProber; fake?: FakeProvider } = {}): Promise<Lab> {
  const fake = o.fake ?? new FakeProvider();
  const providers = o.providers ?? [fake];
  const ssh = await loadOrCreateSshIdentity(mkdtempSync(join(tmpdir(), 'gpuprov-test-keys-')));
  const worker = await startTestWorker({ deps: { registry: new ProviderRegistry(providers), ssh, prober: o.prober ?? fake.prober() } });
  const client = await testEnv().client();
  return {
    fake,
    worker,
    start: async (spec, tuning) => {
      const name = spec.name ?? `vm${randomUUID().slice(0, 8)}`;
      return client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
        taskQueue: worker.taskQueue,
        workflowId: `${vmWorkflowId(name)}-${randomUUID().slice(0, 6)}`,
        args: [{ spec: { ...spec, name }, tuning: { ...FAST, ...tuning } }],
        staticSummary: `test VM ${name}`,
      });
    },
    stop: () => worker.stop(),
  };
}

export async function status(h: WorkflowHandle): Promise<VmStatus> {
  return h.query(statusQuery);
}

/** Poll the status query until `pred` holds (bounded). */
export async function waitFor(h: WorkflowHandle, pred: (s: VmStatus) => boolean, what: string, timeoutMs = 30_000): Promise<VmStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: VmStatus | undefined;
  while (Date.now() < deadline) {
    try {
      last = await status(h);
      if (pred(last)) return last;
    } catch {
      // the first workflow task may not have run yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}; last stage ${last?.stage ?? 'none'}`);
}

export const waitStage = (h: WorkflowHandle, stage: Stage, timeoutMs?: number): Promise<VmStatus> =>
  waitFor(h, (s) => s.stage === stage, `stage ${stage}`, timeoutMs);

/** Query a fleet's status until `pred` holds (600 polls, 100 ms apart); the slots' last state in the error. */
export async function waitFleet(h: WorkflowHandle, pred: (s: FleetStatus) => boolean, what: string): Promise<FleetStatus> {
  let last: FleetStatus | undefined;
  for (let i = 0; i < 600; i++) {
    last = await h.query(fleetStatusQuery).catch(() => last);
    if (last && pred(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last?.slots.map((s) => [s.slot, s.attempt, s.stage, s.endpoint, s.failedReason]))}`);
}
