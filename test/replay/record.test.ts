/**
 * Records the saved histories (only with GPUPROV_RECORD_HISTORIES=1), each on the run's dev server:
 * a single-attempt launch, a failover with compensation, a standalone teardown; a hedged launch
 * (--parallel 2); a VM that
 * continued as new while Ready (both runs); a preempted VM replaced before its deadline (both runs); a fleet applied, scaled up and down, torn down (and
 * one of its slots); k3s VMs on simulated k3s hosts by the boot route and by SSH push.
 * One scenario: `-t <name>`. A history is written only after its claim (claims.ts) holds and the
 * secret scan finds nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, inject, it } from 'vitest';
import { loadOrCreateSshIdentity } from '../../src/ssh/identity';
import { instanceLostSignal, teardownSignal } from '../../src/core/api';
import type { teardownWorkflow } from '../../src/workflows';
import { requireServer, requireTool, testEnv } from '../harness/temporal';
import { startLab, waitStage } from '../workflows/helpers';
import { CLAIMS } from './claims';
import { attributesOf, privateKeyLines, writeHistory, type HistoryJson } from './history-file';
import { recordFleet } from './record-fleet';
import { recordK3s } from './record-k3s';

const record = process.env.GPUPROV_RECORD_HISTORIES === '1';
const haveSshTools = existsSync('/usr/sbin/sshd') && existsSync('/usr/bin/openssl') && existsSync('/usr/bin/flock');

/** The run's history as the CLI's `workflow show -o json` prints it (the form replay loads). */
function showHistory(workflowId: string, runId?: string): string {
  const args = ['workflow', 'show', '-w', workflowId, ...(runId ? ['-r', runId] : []), '-o', 'json', '--address', testEnv().address];
  return execFileSync(inject('temporalCliPath'), args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** Save one run's history as `file`: its claim must hold, and it must hold no secret. */
function save(file: string, workflowId: string, o: { runId?: string; privateKey?: string } = {}): HistoryJson {
  const json = showHistory(workflowId, o.runId);
  const h = JSON.parse(json) as HistoryJson;
  CLAIMS.find((c) => c.file === file)?.check(h);
  writeHistory(file, json, o.privateKey ? privateKeyLines(o.privateKey) : []);
  return h;
}

const saveHandle = (h: WorkflowHandle, file: string): HistoryJson => save(file, h.workflowId);

describe.skipIf(!record || !requireServer())('record histories (FakeProvider)', () => {
  it('records the single-attempt launch, the failover with compensation and the teardown', async () => {
    const lab = await startLab();
    try {
      const one = await lab.start({ name: 'hist-one', k8s: 'off' }, { healthIntervalMs: 60_000 });
      await waitStage(one, 'ready');
      await one.signal(teardownSignal);
      await one.result();
      saveHandle(one, 'single-attempt.json');

      lab.fake.script({ primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', ambiguous: true });
      const two = await lab.start({ name: 'hist-two', k8s: 'off' }, { healthIntervalMs: 60_000 });
      await waitStage(two, 'ready');
      await two.signal(teardownSignal);
      await two.result();
      saveHandle(two, 'failover-compensated.json');

      const client = await testEnv().client();
      const td = await client.workflow.start<typeof teardownWorkflow>('teardownWorkflow', {
        taskQueue: lab.worker.taskQueue,
        workflowId: `teardown-hist-${Date.now()}`,
        args: [
          {
            target: { at: { cloud: 'fake', region: 'fake-a' }, vmName: 'hist-two', instanceIds: [], mode: 'full', pollIntervalMs: 200 },
            tuning: { mutateInitialIntervalMs: 100 },
          },
        ],
      });
      await td.result();
      saveHandle(td, 'teardown.json');
    } finally {
      await lab.stop();
    }
  });

  it('records a hedged launch (--parallel 2): both offers in flight, one wins, the loser is released', async () => {
    const lab = await startLab();
    try {
      lab.fake.setBootMs(300);
      const h = await lab.start({ name: 'hist-hedge', k8s: 'off', parallel: 2 }, { healthIntervalMs: 60_000 });
      await waitStage(h, 'ready');
      await h.signal(teardownSignal);
      await h.result();
      saveHandle(h, 'hedged-launch.json');
    } finally {
      await lab.stop();
    }
  });

  it('records a Ready VM that continued as new, both runs', async () => {
    const lab = await startLab();
    try {
      // A launch is ~40 events and each health check ~8: run 1 continues after a few checks, and
      // run 2 would only after ~7 s, long after the teardown signal below reaches it.
      const h = await lab.start({ name: 'hist-can', k8s: 'off' }, { healthIntervalMs: 1_000, continueAsNewAfterEvents: 60 });
      await waitStage(h, 'ready');
      const first = (await h.describe()).runId;
      let runId = first;
      for (let i = 0; i < 600 && runId === first; i++) {
        await new Promise((r) => setTimeout(r, 100));
        runId = (await h.describe()).runId;
      }
      expect(runId, 'the VM never continued as new').not.toBe(first);
      await h.signal(teardownSignal);
      expect((await h.result()).stage).toBe('terminated');
      const run1 = save('continue-as-new.run1.json', h.workflowId, { runId: first });
      const can = run1.events.at(-1)!;
      save('continue-as-new.run2.json', h.workflowId, { runId: attributesOf(can).newExecutionRunId as string });
    } finally {
      await lab.stop();
    }
  });

  it('records a preempted --recover VM replaced before its deadline, both runs', async () => {
    const lab = await startLab();
    try {
      const h = await lab.start({ name: 'hist-preempt', k8s: 'off', recover: true }, { healthIntervalMs: 60_000 });
      const ready = await waitStage(h, 'ready');
      const first = (await h.describe()).runId;
      const id = ready.instanceIds[0]!;
      lab.fake.setBootMs(500);
      const notice = lab.fake.preempt(id, { noticeMs: 60_000 })!;
      // What the account watcher sends for it (the watcher's own cadence is minutes here).
      await h.signal(instanceLostSignal, { instanceIds: [id], cause: { kind: 'preempted', ...notice }, reason: 'preempted' });
      let runId = first;
      for (let i = 0; i < 300 && runId === first; i++) {
        await new Promise((r) => setTimeout(r, 100));
        runId = (await h.describe()).runId;
      }
      await waitStage(h, 'ready');
      for (let i = 0; i < 100 && lab.fake.liveCount('hist-preempt') > 1; i++) await new Promise((r) => setTimeout(r, 100));
      await h.signal(teardownSignal);
      expect((await h.result()).stage).toBe('terminated');
      save('preempt-replace.run1.json', h.workflowId, { runId: first });
      save('preempt-replace.run2.json', h.workflowId, { runId });
    } finally {
      await lab.stop();
    }
  });
});

describe.skipIf(!record || !requireServer() || !requireTool('sshd, openssl, flock', haveSshTools, 'apt-get install -y openssh-server openssl util-linux'))(
  'record histories (real sshd)',
  () => {
    it('records a fleet applied with 1 node, scaled to 2, back to 1, then down, and one of its slots (local cloud)', async () => {
      const root = mkdtempSync(join(tmpdir(), 'gpuprov-record-fleet-'));
      try {
        const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
        const { fleetId, slotId } = await recordFleet(root, ssh);
        save('fleet-scale.json', fleetId, { privateKey: ssh.privateKey });
        save('fleet-slot.json', slotId, { privateKey: ssh.privateKey });
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }, 300_000);

    it('records k3s VMs on simulated k3s hosts: installed at boot, and pushed over SSH', async () => {
      const root = mkdtempSync(join(tmpdir(), 'gpuprov-record-k3s-'));
      try {
        const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
        const ids = await recordK3s(root, ssh);
        save('k3s-boot.json', ids.boot, { privateKey: ssh.privateKey });
        save('k3s-push.json', ids.push, { privateKey: ssh.privateKey });
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }, 300_000);
  },
);
