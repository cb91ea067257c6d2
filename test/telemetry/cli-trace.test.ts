/**
 * `provision start` as the CLI runs it, with OTEL_EXPORTER_OTLP_ENDPOINT set: its own
 * `provision start` span is the root of one trace that holds the client's StartWorkflow span, the
 * workflow's and every activity's, up to Ready; the span ends when the command returns.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Io } from '../../src/client/command';
import { startCommand } from '../../src/client/commands/start';
import { connectClient } from '../../src/client/connect';
import { teardownSignal } from '../../src/core/api';
import { requireServer, requireTool, testEnv } from '../harness/temporal';
import { pollUntil, startWorkerUnderTest, type WorkerUnderTest } from './launch-lab';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver';

const haveSshd = fs.existsSync('/usr/sbin/sshd');

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('provision start: one trace to Ready', () => {
  let receiver: OtlpReceiver | undefined;
  let worker: (WorkerUnderTest & { dir: string }) | undefined;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-cli-trace-'));

  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    if (worker) fs.rmSync(worker.dir, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('the command span is the root; StartWorkflow, the workflow and the activities are in its trace', async () => {
    receiver = await startOtlpReceiver();
    const t = testEnv();
    worker = await startWorkerUnderTest({ address: t.address, namespace: t.namespace, otlpEndpoint: receiver.endpoint, faults: [] });
    const name = `trc${randomUUID().slice(0, 8)}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      GPUPROV_STATE_DIR: path.join(home, 'state'),
      TEMPORAL_ADDRESS: t.address,
      TEMPORAL_NAMESPACE: t.namespace,
      GPUPROV_TASK_QUEUE: worker.taskQueue,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    };
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), isTTY: false, env };

    const code = await startCommand.run(['--name', name, '--cloud', 'local', '--no-k8s', '--json'], io);
    expect(code, err.join('')).toBe(0);
    expect(JSON.parse(out.join('')) as { status: { stage: string } }).toMatchObject({ ok: true, status: { stage: 'ready' } });

    const conn = await connectClient({ ...io, out: () => undefined, err: () => undefined }, { autoStart: false });
    const handle = conn.client.workflow.getHandle(`vm-${name}`);
    await handle.signal(teardownSignal);
    await handle.result();
    await conn.connection.close();

    const r = receiver;
    const spans = await pollUntil(
      async () => r.spans,
      (all) => ['provision start', 'RunActivity:probeSsh', 'RunWorkflow:vmWorkflow'].every((n) => all.some((s) => s.name === n)),
      'the command span and the launch spans',
    );
    const root = spans.find((s) => s.name === 'provision start')!;
    expect(root).toMatchObject({ service: 'gpuprov-cli', parentSpanId: '' });
    const trace = spans.filter((s) => s.traceId === root.traceId);
    const start = trace.find((s) => s.name === 'StartWorkflow:vmWorkflow');
    expect(start?.parentSpanId, JSON.stringify(trace.map((s) => s.name))).toBe(root.spanId);
    expect(trace.find((s) => s.name === 'RunWorkflow:vmWorkflow')?.parentSpanId).toBe(start!.spanId);
    const names = new Set(trace.map((s) => s.name));
    for (const n of ['RunActivity:planOffers', 'RunActivity:prepareAndCreate', 'RunActivity:awaitRunning', 'RunActivity:probeSsh'])
      expect(names, n).toContain(n);
  }, 300_000);
});
