/**
 * The worker's logs, metrics and traces, seen from outside during one launch on the local cloud
 * (real sshd): the first create fails with Capacity (a failover), the second instance boots
 * slowly (NotReady polls), then SSH, Ready, teardown. The launch runs once; each `it` checks
 * one signal.
 */
import * as fs from 'node:fs';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, type ConnectedClient } from '../../src/client/connect';
import { GpuprovClient } from '../../src/client/client';
import { teardownSignal } from '../../src/core/api';
import { METRICS } from '../../src/core/metrics';
import { requireServer, requireTool, testEnv } from '../harness/temporal';
import { FAST, waitFor, waitStage } from '../workflows/helpers';
import { pollUntil, startWorkerUnderTest, type WorkerUnderTest } from './launch-lab';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver';
import { has, scrape, value, type Sample } from './prometheus';

const haveSshd = existsSync('/usr/sbin/sshd');
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts');
const BOOT_DELAY_MS = 6_000;

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('worker telemetry during a launch', () => {
  const name = `tel${randomUUID().slice(0, 8)}`;
  let receiver: OtlpReceiver;
  let worker: (WorkerUnderTest & { dir: string }) | undefined;
  let conn: ConnectedClient | undefined;
  let log: Record<string, unknown>[] = [];
  let rawLog = '';
  const scrapes: { before?: Sample[]; launching?: Sample[]; up?: Sample[]; after?: Sample[] } = {};
  let cloudStage = '';

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const env = testEnv();
    worker = await startWorkerUnderTest({
      address: env.address,
      namespace: env.namespace,
      otlpEndpoint: receiver.endpoint,
      faults: [
        { id: 'full', error: 'Capacity', times: 1 },
        { id: 'slow', bootDelayMs: BOOT_DELAY_MS },
      ],
    });
    const w = worker;
    scrapes.before = await pollUntil(
      () => scrape(w.metricsAddress),
      (s) => has(s, METRICS.orphansSwept),
      'the metrics endpoint',
    );

    // Through the CLI's client: its StartWorkflow span is the root of the launch's trace.
    conn = await connectClient(
      {
        out: () => undefined,
        err: () => undefined,
        isTTY: false,
        env: { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      },
      { autoStart: false },
    );
    const { handle } = await new GpuprovClient(conn.client, w.taskQueue).start({ name, clouds: ['local'], k8s: 'off' }, FAST);

    await waitStage(handle, 'booting', 60_000);
    scrapes.launching = await pollUntil(
      () => scrape(w.metricsAddress),
      // GpuprovStage indexes an attempt's booting as creating (src/core/search-attributes.ts).
      (s) => value(s, METRICS.vms, { stage: 'creating' }) >= 1,
      'gpuprov_vms{stage="creating"} while booting',
      BOOT_DELAY_MS * 3,
    );
    const ready = await waitStage(handle, 'ready', 90_000);
    cloudStage = ready.offer?.cloud ?? '';
    const price = ready.offer?.pricePerHour ?? 0;
    scrapes.up = await pollUntil(
      () => scrape(w.metricsAddress),
      (s) => value(s, METRICS.vms, { stage: 'ready' }) >= 1 && value(s, METRICS.spendPerHour) >= price && value(s, METRICS.launches, { outcome: 'ready' }) >= 1,
      'the Ready VM in the gauges',
    );
    await handle.signal(teardownSignal);
    await waitFor(handle, (s) => s.stage === 'terminated', 'terminated', 60_000).catch(() => undefined);
    await handle.result();
    scrapes.after = await pollUntil(
      () => scrape(w.metricsAddress),
      (s) => value(s, `${METRICS.timeToGone}_count`) >= 1,
      'time to gone recorded',
    );
    const metricsText = await (await fetch(`http://${w.metricsAddress}/metrics`)).text();
    // Lets the workflow's last spans reach the exporter before the worker flushes on SIGTERM.
    await pollUntil(
      async () => receiver.spans,
      (spans) => spans.some((s) => s.name === 'RunWorkflow:vmWorkflow'),
      'the workflow span',
      20_000,
    ).catch(() => undefined);
    await worker.stop();
    rawLog = fs.readFileSync(worker.logFile, 'utf8');
    // For people: what an operator sees of one launch.
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, 'telemetry-worker.log'), rawLog);
    fs.writeFileSync(
      path.join(ARTIFACTS, 'telemetry-metrics.txt'),
      metricsText
        .split('\n')
        .filter((l) => l.includes('gpuprov_'))
        .join('\n'),
    );
    log = rawLog
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }, 300_000);

  afterAll(async () => {
    await worker?.stop();
    await conn?.connection.close();
    await receiver?.close();
    if (worker) fs.rmSync(worker.dir, { recursive: true, force: true });
  });

  it('logs: one JSON object per line, no colour, VM on every line about it, polls at debug', () => {
    for (const ansi of ['\u001b', '\\u001b']) expect(rawLog).not.toContain(ansi);
    for (const l of log) expect(l).toMatchObject({ time: expect.any(String), level: expect.any(String), msg: expect.any(String) });
    const mine = log.filter((l) => l.workflowId === `vm-${name}`);
    expect(mine.length).toBeGreaterThan(10);
    for (const l of mine) expect(l.vmName).toBe(name);
    // Workflow lines carry the cloud and attempt; activity lines the cloud from their input.
    expect(mine.find((l) => l.component === 'workflow' && l.msg === 'stage booting')).toMatchObject({ cloud: 'local', attempt: 2 });
    expect(mine.find((l) => l.component === 'workflow' && String(l.msg).startsWith('attempt failed'))).toMatchObject({
      kind: 'Capacity',
      attempt: 1,
      cloud: 'local',
    });
    expect(mine.find((l) => l.component === 'activity' && l.msg === 'instance created')).toMatchObject({ cloud: 'local', activityType: 'prepareAndCreate' });
    // The boot wait polled: at debug, as one compact line, never a WARN "Activity failed".
    const polls = mine.filter((l) => l.msg === 'not ready yet');
    expect(polls.length).toBeGreaterThan(0);
    for (const p of polls)
      expect(p).toMatchObject({ level: 'debug', failure: 'NotReady', cloud: 'local', activityType: 'awaitRunning', activityAttempt: expect.any(Number) });
    const noisy = log.filter(
      (l) => l.msg === 'Activity failed' && ['NotReady', 'SshNotReady', 'SshAuthFailed'].includes(String((l.error as { type?: string } | undefined)?.type)),
    );
    expect(noisy).toEqual([]);
    expect(log.some((l) => l.level === 'info' && String(l.msg).includes('polling task queue'))).toBe(true);
  });

  it('metrics: gpuprov_* series on the Prometheus endpoint move during and after the launch', () => {
    const { before, launching, up, after } = scrapes as Required<typeof scrapes>;
    expect(has(before, 'temporal_request')).toBe(true); // the SDK's own series, same endpoint
    expect(value(before, METRICS.orphansSwept)).toBe(0);
    expect(value(launching, METRICS.vms, { stage: 'creating' })).toBeGreaterThanOrEqual(1);
    expect(launching.some((s) => s.name === METRICS.vms && s.labels.stage === 'booting')).toBe(false);
    expect(value(launching, METRICS.failoverAttempts, { kind: 'Capacity', cloud: 'local' })).toBe(1);
    expect(value(launching, METRICS.launches)).toBe(0);
    expect(cloudStage).toBe('local');
    expect(value(up, METRICS.launches, { outcome: 'ready', cloud: 'local' })).toBe(1);
    expect(value(up, `${METRICS.timeToReady}_count`, { cloud: 'local' })).toBe(1);
    expect(value(up, `${METRICS.timeToReady}_sum`, { cloud: 'local' })).toBeGreaterThan(BOOT_DELAY_MS / 1_000);
    expect(value(up, METRICS.spendPerHour)).toBeGreaterThan(0);
    expect(has(up, METRICS.leaked)).toBe(true);
    expect(value(after, `${METRICS.timeToGone}_count`, { cloud: 'local' })).toBe(1);
    expect(value(after, `${METRICS.timeToReady}_bucket`, { cloud: 'local', le: '3600' })).toBe(1);
  });

  it('traces: the client start span is the root of the workflow and activity spans', () => {
    const start = receiver.spans.find((s) => s.name === 'StartWorkflow:vmWorkflow' && s.service === 'gpuprov-cli');
    expect(start, JSON.stringify(receiver.spans.map((s) => s.name))).toBeDefined();
    const trace = receiver.spans.filter((s) => s.traceId === start!.traceId);
    const names = new Set(trace.map((s) => s.name));
    for (const n of [
      'RunWorkflow:vmWorkflow',
      'StartActivity:planOffers',
      'RunActivity:planOffers',
      'RunActivity:prepareAndCreate',
      'RunActivity:awaitRunning',
      'RunActivity:probeSsh',
    ]) {
      expect(names, n).toContain(n);
    }
    expect(trace.find((s) => s.name === 'RunWorkflow:vmWorkflow')?.parentSpanId).toBe(start!.spanId);
    expect(trace.filter((s) => s.service === 'gpuprov-worker').length).toBeGreaterThan(5);
  });
});
