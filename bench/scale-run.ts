/**
 * One run of the scale bench (bench/scale.ts): N VMs over `pairs` (cloud, region) pairs of one
 * deployment on a fresh lab (dev server, in-process worker, fake clouds with a 2 s boot), real
 * vmWorkflows and account watchers. Phases: launch all at once (wall, RSS, CPU); idle at an
 * accelerated cadence (bench/scale-model.ts: history events, cloud calls and CPU per VM-day, the
 * watchers' history growth); back at the shipped cadence, `kills` instances vanish behind the
 * product's back (time until each VM's status says `lost`); teardown of all (wall, instances
 * left at the cloud, counted there).
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { statusQuery, teardownSignal, vmWorkflowId } from '../src/core/api';
import { startAttributes } from '../src/core/search-attributes';
import { DEFAULT_TUNING } from '../src/core/tuning';
import { DEFAULT_WATCHER_TUNING, watcherWorkflowId } from '../src/core/watcher';
import { watcherNudgeSignal, watcherStateQuery, type WatcherTuning } from '../src/core/watcher-api';
import type { vmWorkflow } from '../src/workflows';
import type { Offer } from '../src/core/provider';
import type { FakeProvider } from '../test/harness/fake-provider';
import { breakdown, eventsOf, longestWorkflowTaskMs, taskSpans } from './history';
import { minusCore, scrapeCore, type CoreMetrics } from './core-metrics';
import { startLab, type Lab } from './lab';
import { census, cloudCalls, eventsWithin, growth, historiesOf, inBatches, largestEvent, minus, total, type Census } from './scale-census';
import { acceleratedWatcher, pairsOf, perShippedHour, perVmDay } from './scale-model';
import { percentile, round, sleep } from './stats';

export const BOOT_MS = 2_000;
/** VM histories read to say which events an idle VM adds. */
const SAMPLE_VMS = 10;

export interface RunOptions {
  vms: number;
  pairs: number;
  accel: number;
  idleMs: number;
  kills: number;
  log: (s: string) => void;
}

interface Placed {
  name: string;
  cloud: string;
  region: string;
  handle?: WorkflowHandle<typeof vmWorkflow>;
}

const mb = (b: number): number => Math.round(b / 2 ** 20);
const cpuS = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1e6;

function offersOf(cloud: string, regions: string[]): Offer[] {
  return regions.map((region) => ({ cloud, region, instanceType: 'gpu-1', gpu: { model: 'H100', count: 1 }, pricePerHour: 2, currency: 'USD' }));
}

/** Polls a visibility count until it reaches `want` or `timeoutMs` passes; answers the last count and when it got there. */
async function countUntil(client: Client, query: string, done: (n: number) => boolean, timeoutMs: number): Promise<{ count: number; atMs: number }> {
  const t0 = Date.now();
  let count = -1;
  while (Date.now() - t0 < timeoutMs) {
    count = (await client.workflow.count(query)).count;
    if (done(count)) break;
    await sleep(500);
  }
  return { count, atMs: Date.now() };
}

export async function scaleRun(o: RunOptions) {
  const pairs = pairsOf(o.pairs);
  const clouds = [...new Set(pairs.map((p) => p.cloud))];
  const lab = await startLab({
    fakes: clouds.map((name) => ({ name, caps: { pollIntervalMs: 1_000, typicalBootMs: BOOT_MS } })),
    scheduleDelay: () => undefined,
    metrics: true,
    log: o.log,
  });
  const fakes = clouds.map((c) => lab.fake(c));
  for (const c of clouds) {
    lab.fake(c).setBootMs(BOOT_MS);
    lab.fake(c).setOffers(
      offersOf(
        c,
        pairs.filter((p) => p.cloud === c).map((p) => p.region),
      ),
    );
  }
  let rssPeak = process.memoryUsage.rss();
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 100);
  try {
    const vms: Placed[] = Array.from({ length: o.vms }, (_, i) => ({ name: `s${o.vms}-${i}`, ...pairs[i % pairs.length]! }));
    const launch = await launchAll(lab, vms, o);
    const rssAtReadyMb = mb(process.memoryUsage.rss());
    const launchPeakMb = mb(rssPeak);
    const watchers = pairs.map((p) => lab.client.workflow.getHandle(watcherWorkflowId('default', p.cloud, p.region)));
    await waitCadence(watchers, 'ready', o.log);
    // Divide by the VMs Ready when the window opens (a launch past the wait's timeout may have finished since).
    const readyNow = (await lab.client.workflow.count(readyQuery(lab))).count;
    const idle = await idleWindow(lab, fakes, watchers, o, readyNow, launch.window);
    const rssAfterIdleMb = mb(process.memoryUsage.rss());
    await nudge(watchers, DEFAULT_WATCHER_TUNING);
    await sleep(2_000);
    const loss = await killSome(lab, vms, fakes, o);
    const teardown = await teardownAll(lab, vms, fakes, o);
    return {
      vms: o.vms,
      pairs: o.pairs,
      launch: { ...launch, rssPeakMb: launchPeakMb, rssAtReadyMb },
      rss: { atReadyMb: rssAtReadyMb, afterIdleMb: rssAfterIdleMb, peakMb: mb(rssPeak) },
      idle,
      loss,
      teardown,
    };
  } finally {
    clearInterval(sampler);
    await lab.close().catch((err: unknown) => o.log(`close: ${String(err)}`));
  }
}

const readyQuery = (lab: Lab): string => `TaskQueue = "${lab.taskQueue}" AND WorkflowType = "vmWorkflow" AND GpuprovStage = "ready"`;

async function launchAll(lab: Lab, vms: Placed[], o: RunOptions) {
  o.log(`${o.vms} VMs over ${o.pairs} pair(s): launching`);
  const core0 = await coreNow(lab);
  const cpu0 = process.cpuUsage();
  const server0 = lab.serverCpuS();
  const t0 = Date.now();
  await inBatches(vms, 50, async (v) => {
    v.handle = await lab.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: lab.taskQueue,
      workflowId: vmWorkflowId(v.name),
      typedSearchAttributes: startAttributes(v.name),
      args: [
        { spec: { name: v.name, clouds: [v.cloud], regions: [v.region], k8s: 'off' }, tuning: { healthIntervalMs: DEFAULT_TUNING.healthIntervalMs / o.accel } },
      ],
    });
  });
  const startCallsMs = Date.now() - t0;
  const r = await countUntil(lab.client, readyQuery(lab), (n) => n >= o.vms, Math.max(300_000, o.vms * 1_000));
  const cpu = cpuS(process.cpuUsage(cpu0));
  const server = lab.serverCpuS() - server0;
  o.log(`${r.count}/${o.vms} Ready in ${r.atMs - t0} ms (start calls ${startCallsMs} ms); CPU worker ${round(cpu, 1)} s, server ${round(server, 1)} s`);
  return {
    wallMs: r.atMs - t0,
    startCallsMs,
    ready: r.count,
    cpuS: { worker: round(cpu, 2), server: round(server, 2) },
    cpuMsPerLaunch: { worker: round((cpu * 1000) / o.vms, 1), server: round((server * 1000) / o.vms, 1) },
    window: { fromMs: t0, toMs: r.atMs },
    core: coreSince(core0, await coreNow(lab)),
  };
}

async function coreNow(lab: Lab): Promise<CoreMetrics | undefined> {
  return lab.metricsAddress ? scrapeCore(lab.metricsAddress).catch(() => undefined) : undefined;
}

/** The core's task and cache figures a phase added, for the workflow types the bench reads. */
function coreSince(a: CoreMetrics | undefined, b: CoreMetrics | undefined) {
  if (!a || !b) return undefined;
  const d = minusCore(b, a);
  const keep = ['accountWatcherWorkflow', 'ledgerPageWorkflow', 'vmWorkflow'];
  return { ...d, byType: Object.fromEntries(Object.entries(d.byType).filter(([t]) => keep.includes(t))) };
}

async function nudge(watchers: WorkflowHandle[], t: WatcherTuning): Promise<void> {
  await Promise.all(watchers.map((w) => w.signal(watcherNudgeSignal, t)));
}

async function waitCadence(watchers: WorkflowHandle[], cadence: string, log: (s: string) => void): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    const states = await Promise.all(watchers.map((w) => w.query(watcherStateQuery).catch(() => undefined)));
    if (states.every((s) => s?.cadence === cadence)) return;
    await sleep(500);
  }
  log(`not every watcher reached cadence ${cadence}; going on`);
}

/** The idle window at `accel`: what every workflow's history and the clouds' call logs gained, per VM-day. */
async function idleWindow(
  lab: Lab,
  fakes: FakeProvider[],
  watchers: WorkflowHandle[],
  o: RunOptions,
  ready: number,
  launched: { fromMs: number; toMs: number },
) {
  const fast = acceleratedWatcher(DEFAULT_WATCHER_TUNING, o.accel);
  o.log(
    `idle: ${round(o.idleMs / 60_000, 1)} min at ×${o.accel} (look every ${fast.readyIntervalMs} ms, backstop every ${DEFAULT_TUNING.healthIntervalMs / o.accel} ms)`,
  );
  await nudge(watchers, fast);
  await sleep(Math.min(5_000, fast.quietWindowMs)); // the nudge's cancelled cycle settles outside the window
  const a: Census = await census(lab.client);
  const coreA = await coreNow(lab);
  const calls0 = cloudCalls(fakes);
  const cpu0 = process.cpuUsage();
  const server0 = lab.serverCpuS();
  const t0 = Date.now();
  await sleep(o.idleMs);
  const calls = minus(cloudCalls(fakes), calls0);
  const cpu = cpuS(process.cpuUsage(cpu0));
  const server = lab.serverCpuS() - server0;
  const sampleMs = Date.now() - t0;
  const coreB = await coreNow(lab);
  const b: Census = await census(lab.client);
  const windowMs = b.atMs - a.atMs;
  const grown = growth(a, b);
  const events = Object.values(grown).reduce((x, g) => x + g.events, 0);
  const day = (count: number, ms = windowMs): number => round(perVmDay(count, ms, o.accel, ready), 2);
  // Which events: every watcher run's history (those in the window), and a sample of VMs' (what they added).
  const watcherRuns = [...b.runs.values()].filter((r) => r.type === 'accountWatcherWorkflow');
  const watcherHistories = await historiesOf(lab.client, watcherRuns);
  const inWindow = new Set(eventsWithin(watcherHistories, a.atMs, b.atMs));
  const watcherKinds = watcherHistories.map((h) => breakdown(h, (e) => inWindow.has(e)));
  const vmRuns = [...b.runs.values()].filter((r) => r.type === 'vmWorkflow').slice(0, SAMPLE_VMS);
  const vmHistories = await Promise.all(vmRuns.map((r) => eventsOf(lab.client.workflow.getHandle(r.workflowId, r.runId))));
  const vmKinds = vmRuns.map((r, i) => {
    const from = a.runs.get(`${r.workflowId}/${r.runId}`)?.events ?? 0;
    return breakdown(vmHistories[i]!, (e) => Number(e.eventId) > from);
  });
  const idled = { fromMs: a.atMs, toMs: b.atMs };
  const atLaunch = new Set(eventsWithin(watcherHistories, launched.fromMs, launched.toMs));
  const sum = (rs: Record<string, number>[]): Record<string, number> =>
    rs.reduce((x, r) => ({ ...x, ...Object.fromEntries(Object.entries(r).map(([k, v]) => [k, (x[k] ?? 0) + v])) }), {});
  const largest = largestEvent(watcherHistories);
  const pageRuns = [...b.runs.values()].filter((r) => r.type === 'ledgerPageWorkflow');
  const pageHistories = await historiesOf(lab.client, pageRuns);
  const largestPage = largestEvent(pageHistories);
  const watcherBytes = grown.accountWatcherWorkflow?.bytes ?? 0;
  o.log(`idle: ${events} events in ${windowMs} ms, ${total(calls)} cloud calls in ${sampleMs} ms (${ready} Ready)`);
  return {
    accel: o.accel,
    windowMs,
    readyVms: ready,
    shippedHours: round((windowMs * o.accel) / 3_600_000, 2),
    eventsByType: grown,
    cloudCalls: calls,
    perVmDay: {
      historyEvents: day(events),
      cloudCalls: day(total(calls), sampleMs),
      byType: Object.fromEntries(Object.entries(grown).map(([k, g]) => [k, day(g.events)])),
      callsByPrimitive: Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, day(v, sampleMs)])),
      cpuMs: { worker: day(cpu * 1000, sampleMs), server: day(server * 1000, sampleMs) },
    },
    expectedLooks: round((windowMs / fast.readyIntervalMs) * watchers.length, 0),
    watcher: {
      runs: watcherRuns.length,
      largestEventBytes: largest.bytes,
      longestTaskMs: longestWorkflowTaskMs(watcherHistories),
      tasksAtLaunch: taskSpans(watcherHistories, launched),
      tasksIdle: taskSpans(watcherHistories, idled),
      eventKindsAtLaunch: sum(watcherHistories.map((h) => breakdown(h, (e) => atLaunch.has(e)))),
      runsAtLaunch: watcherHistories.filter((h) => h.some((e) => atLaunch.has(e))).length,
      largestEventKind: largest.kind,
      historyBytesPerHour: round(perShippedHour(watcherBytes, windowMs, o.accel) / watchers.length, 0),
      eventsPerHour: round(perShippedHour(grown.accountWatcherWorkflow?.events ?? 0, windowMs, o.accel) / watchers.length, 1),
      eventKinds: sum(watcherKinds),
    },
    ledgerPages: {
      runs: pageRuns.length,
      largestEventBytes: largestPage.bytes,
      largestEventKind: largestPage.kind,
      longestTaskMs: longestWorkflowTaskMs(pageHistories),
      tasksAtLaunch: taskSpans(pageHistories, launched),
      tasksIdle: taskSpans(pageHistories, idled),
    },
    sampledVmEventKinds: { vms: vmRuns.length, kinds: sum(vmKinds) },
    core: coreSince(coreA, coreB),
    // The same spans of a sample of VMs: a saturated worker holds every workflow's tasks alike.
    sampledVmTasks: { atLaunch: taskSpans(vmHistories, launched), idle: taskSpans(vmHistories, idled) },
  };
}

/** `kills` VMs' instances vanish, each at its own random moment within one ready interval; time until each status says `lost`. */
async function killSome(lab: Lab, vms: Placed[], fakes: FakeProvider[], o: RunOptions) {
  const step = Math.max(1, Math.floor(vms.length / o.kills));
  const victims = Array.from({ length: o.kills }, (_, i) => vms[i * step]!);
  o.log(`loss: ${victims.length} instances vanish within ${DEFAULT_WATCHER_TUNING.readyIntervalMs} ms`);
  const t0 = Date.now();
  const kills = await Promise.all(
    victims.map(async (v) => {
      await sleep(Math.floor(Math.random() * DEFAULT_WATCHER_TUNING.readyIntervalMs));
      const fake = lab.fake(v.cloud);
      const killedAt = Date.now();
      for (const i of fake.live(v.name)) fake.vanish(i.id);
      for (let tries = 0; tries < 1_200; tries++) {
        const s = await v.handle!.query(statusQuery).catch(() => undefined);
        if (s?.stage === 'lost') return { killedAtMs: killedAt - t0, lagMs: Date.now() - killedAt };
        await sleep(250);
      }
      return { killedAtMs: killedAt - t0, lagMs: NaN };
    }),
  );
  const seen = kills.map((k) => k.lagMs).filter(Number.isFinite);
  return {
    kills: victims.length,
    detected: seen.length,
    p50Ms: round(percentile(seen, 50)),
    p95Ms: round(percentile(seen, 95)),
    maxMs: round(Math.max(...seen)),
    /** Each kill (ms from the phase's start) and its lag; the watchers' looks (inventory calls), ms from the phase's start. */
    each: kills,
    looksAtMs: fakes.flatMap((f) => f.calls.filter((c) => c.primitive === 'inventory' && c.at >= t0).map((c) => c.at - t0)),
  };
}

async function teardownAll(lab: Lab, vms: Placed[], fakes: FakeProvider[], o: RunOptions) {
  const open = `TaskQueue = "${lab.taskQueue}" AND WorkflowType = "vmWorkflow" AND ExecutionStatus = "Running"`;
  o.log('teardown of all');
  const cpu0 = process.cpuUsage();
  const server0 = lab.serverCpuS();
  const t0 = Date.now();
  await inBatches(vms, 50, (v) => v.handle!.signal(teardownSignal).catch(() => undefined));
  const r = await countUntil(lab.client, open, (n) => n === 0, Math.max(300_000, o.vms * 1_000));
  const cpu = cpuS(process.cpuUsage(cpu0));
  const server = lab.serverCpuS() - server0;
  const left = fakes.reduce((a, f) => a + f.liveCount(), 0);
  const sides = fakes.reduce((a, f) => a + f.sideResources().length, 0);
  o.log(`teardown: ${r.count} still open after ${r.atMs - t0} ms; ${left} instances left at the cloud`);
  return {
    wallMs: r.atMs - t0,
    stillOpen: r.count,
    instancesLeft: left,
    sideResourcesLeft: sides,
    cpuMsPerVm: { worker: round((cpu * 1000) / o.vms, 1), server: round((server * 1000) / o.vms, 1) },
  };
}

export type RunResult = Awaited<ReturnType<typeof scaleRun>>;
