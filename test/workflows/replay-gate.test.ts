/**
 * The replay gate (src/server/replay-gate.ts) on the run's dev server: an open VM recorded by
 * gpuprov's real bundle, then the gate run against that bundle (passes), against a deliberately
 * incompatible one (./replay-gate/altered.ts: refused, naming the VM) and against the same change
 * guarded by a patch (./replay-gate/patched.ts: passes). Last, the real worker process
 * (src/worker.ts) finds the incompatible bundle where its bundle cache keeps it: it exits 3 with
 * the refusal, and the VM's pending workflow task is never taken; the embedded default's worker
 * daemon, on a bundle other than the last that passed, is refused the same way and its start says why.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teardownSignal } from '../../src/core/api';
import { REPLAY_GATE_EXIT, refusalLines } from '../../src/core/replay-gate';
import { startWorkerDaemon, workerCommand } from '../../src/server/daemons';
import { embeddedConfig } from '../../src/server/embedded-config';
import { lastGoodBundleFile, ReplayGateRefused, replayGate, runReplayGate } from '../../src/server/replay-gate';
import { WORKER_READY_TEXT } from '../../src/server/worker-ready';
import { buildInChildProcess, bundleHash, workflowBundleKey, workflowBundlePath } from '../../src/server/workflow-bundle';
import { workflowInterceptorModules } from '../../src/worker';
import { requireServer, testEnv } from '../harness/temporal';
import { startLab, waitStage, type Lab } from './helpers';

const SLOW = 300_000;
const EventType = temporal.api.enums.v1.EventType;

describe.skipIf(!requireServer())('the replay gate', () => {
  let lab: Lab;
  let vm: WorkflowHandle;
  const dir = fs.mkdtempSync(join(tmpdir(), 'gpuprov-gate-'));
  const cache = join(dir, 'cache');
  const bundles = { real: '', altered: join(dir, 'altered.js'), patched: join(dir, 'patched.js') };
  const gate = async (bundlePath: string) => runReplayGate({ client: await testEnv().client(), taskQueue: lab.worker.taskQueue, bundlePath, sample: 20 });

  beforeAll(async () => {
    const modules = workflowInterceptorModules(false);
    // Built while the VM launches: webpack runs in child processes.
    const building = Promise.all([
      buildInChildProcess(join(__dirname, 'replay-gate', 'altered.ts'), bundles.altered, modules),
      buildInChildProcess(join(__dirname, 'replay-gate', 'patched.ts'), bundles.patched, modules),
    ]);
    building.catch(() => undefined);
    bundles.real = await workflowBundlePath();
    lab = await startLab();
    vm = await lab.start({ name: 'gate1', k8s: 'off' });
    await waitStage(vm, 'ready', 60_000);
    // No worker from here on: what the gate sees stays as recorded.
    await lab.worker.stop();
    await building;
    // The incompatible bundle where a worker process's bundle cache (GPUPROV_CACHE_DIR) would keep the real one.
    fs.mkdirSync(join(cache, 'bundles'), { recursive: true });
    fs.copyFileSync(bundles.altered, join(cache, 'bundles', `${workflowBundleKey({ interceptorModules: modules })}.js`));
  }, SLOW);

  afterAll(async () => {
    await vm?.terminate('replay gate test over').catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'passes the bundle that recorded the open workflows',
    async () => {
      const v = await gate(bundles.real);
      expect(v.refused, refusalLines(v, 'q').join('\n')).toBe(false);
      expect(v.findings.find((f) => f.workflowId === vm.workflowId)).toMatchObject({ type: 'vmWorkflow', outcome: 'ok' });
    },
    SLOW,
  );

  it(
    'refuses a bundle whose vmWorkflow issues a different first command, naming the VM and the fix',
    async () => {
      const v = await gate(bundles.altered);
      expect(v.refused).toBe(true);
      const bad = v.findings.filter((f) => f.outcome !== 'ok');
      expect(bad.map((f) => [f.workflowId, f.outcome])).toEqual([[vm.workflowId, 'nondeterministic']]);
      const text = refusalLines(v, lab.worker.taskQueue).join('\n');
      expect(text).toContain(`vmWorkflow ${vm.workflowId} (run ${(await vm.describe()).runId}): determinism failure:`);
      expect(text).toContain('src/core/patches.ts');
    },
    SLOW,
  );

  it(
    'passes the same change guarded by a patch',
    async () => {
      const v = await gate(bundles.patched);
      expect(v.refused, refusalLines(v, 'q').join('\n')).toBe(false);
      expect(v.findings.find((f) => f.workflowId === vm.workflowId)?.outcome).toBe('ok');
    },
    SLOW,
  );

  it(
    'keeps the worker process from polling: it exits 3 with the refusal and the VM takes no workflow task',
    async () => {
      // A workflow task waits for any worker that polls: the teardown signal.
      await vm.signal(teardownSignal);
      // A workflow task the stopped worker left started holds the signal back until that task times out (10 s).
      let before: temporal.api.history.v1.IHistoryEvent[] = [];
      let signalled = -1;
      for (let i = 0; i < 30 && signalled < 0; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 1000));
        before = (await vm.fetchHistory()).events ?? [];
        signalled = before.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'teardown');
      }
      expect(signalled).toBeGreaterThan(0);
      const taken = (events: typeof before): boolean => events.slice(signalled).some((e) => e.workflowTaskStartedEventAttributes);
      expect(taken(before)).toBe(false);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        GPUPROV_STATE_DIR: join(dir, 'state'),
        GPUPROV_CACHE_DIR: cache,
        GPUPROV_TASK_QUEUE: lab.worker.taskQueue,
      };
      delete env.GPUPROV_EMBEDDED_ADDRESS;
      delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
      const child = spawn(process.execPath, workerCommand(), {
        env: { ...env, TEMPORAL_ADDRESS: testEnv().address, TEMPORAL_NAMESPACE: testEnv().namespace },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', resolve);
        // A worker that polls would never exit by itself: stop it so the assertions below say why.
        child.stdout.on('data', () => {
          if (out.includes(WORKER_READY_TEXT)) child.kill('SIGKILL');
        });
      });
      expect(out).not.toContain(WORKER_READY_TEXT);
      expect(code, out).toBe(REPLAY_GATE_EXIT);
      expect(out).toContain(`vmWorkflow ${vm.workflowId}`);
      expect(out).toContain('determinism failure');
      const after = (await vm.fetchHistory()).events ?? [];
      // Only the server's own bookkeeping may follow (a sticky task timing out to the normal queue): no task was started.
      expect(taken(after)).toBe(false);
      expect(after.slice(before.length).map((e) => EventType[e.eventType ?? 0])).toEqual(
        after.slice(before.length).map(() => expect.stringMatching(/^EVENT_TYPE_WORKFLOW_TASK_(SCHEDULED|TIMED_OUT)$/)),
      );
    },
    SLOW,
  );

  it(
    "stops the embedded default's worker daemon on a changed bundle, and the start says why",
    async () => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        GPUPROV_STATE_DIR: join(dir, 'embedded-state'),
        GPUPROV_CACHE_DIR: cache,
        GPUPROV_TASK_QUEUE: lab.worker.taskQueue,
        GPUPROV_EMBEDDED_PORT: testEnv().address.split(':').at(-1),
      };
      delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
      delete env.TEMPORAL_ADDRESS;
      // Another bundle passed before: this one is new, so the gate runs.
      fs.mkdirSync(join(dir, 'embedded-state', 'run'), { recursive: true });
      fs.writeFileSync(lastGoodBundleFile(env), 'a-bundle-of-earlier-code');
      const refused = await startWorkerDaemon(embeddedConfig(env), env, 120_000).catch((e: unknown) => e as Error);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toContain('the gpuprov worker refused to start on this code');
      expect((refused as Error).message).toContain(`vmWorkflow ${vm.workflowId}`);
      expect(fs.readFileSync(lastGoodBundleFile(env), 'utf8')).toBe('a-bundle-of-earlier-code');
    },
    SLOW,
  );

  it(
    'records the bundle that passed for the embedded worker, skips it next time, and is switched off only loudly',
    async () => {
      const client = await testEnv().client();
      const env: NodeJS.ProcessEnv = { GPUPROV_STATE_DIR: join(dir, 'embedded-pass'), GPUPROV_EMBEDDED_ADDRESS: testEnv().address };
      const lines: string[] = [];
      const warnings: string[] = [];
      const run = (bundlePath: string, extra: NodeJS.ProcessEnv = {}) =>
        replayGate({
          client,
          taskQueue: lab.worker.taskQueue,
          bundlePath,
          env: { ...env, ...extra },
          log: (l) => lines.push(l),
          warn: (l) => warnings.push(l),
        });
      await run(bundles.real);
      expect(lines.at(-1)).toMatch(/^replay gate: passed on task queue .*: [1-9]\d* open workflow\(s\) replayed/);
      expect(fs.readFileSync(lastGoodBundleFile(env), 'utf8')).toBe(bundleHash(bundles.real));
      await run(bundles.real);
      expect(lines.at(-1)).toBe('replay gate: this bundle passed before; not replayed again');
      await expect(run(bundles.altered)).rejects.toBeInstanceOf(ReplayGateRefused);
      await run(bundles.altered, { GPUPROV_REPLAY_GATE: 'off' });
      expect(warnings).toEqual([expect.stringContaining('replay gate: OFF (GPUPROV_REPLAY_GATE=off)')]);
      expect(fs.readFileSync(lastGoodBundleFile(env), 'utf8')).toBe(bundleHash(bundles.real));
    },
    SLOW,
  );

  it(
    'refuses a bad GPUPROV_REPLAY_GATE with exit 2 before connecting',
    async () => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        GPUPROV_STATE_DIR: join(dir, 'bad-input'),
        GPUPROV_REPLAY_GATE: 'maybe',
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      };
      delete env.GPUPROV_EMBEDDED_ADDRESS;
      const child = spawn(process.execPath, workerCommand(), { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, err).toBe(2);
      expect(err).toContain('GPUPROV_REPLAY_GATE: GPUPROV_REPLAY_GATE=maybe is neither on nor off');
      expect(err).toContain('fix: set GPUPROV_REPLAY_GATE to on (the default) or off');
    },
    SLOW,
  );
});
