/**
 * gpuprov benchmarks (issue 8): `npm run bench` (full) or `npm run bench -- --quick` (same
 * metrics at small N). Starts its own dev server and worker, prints a table, writes
 * bench/results/latest.json. Absolute times on shared machines are noisy: P1 runs a bare
 * baseline in the same run, interleaved.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import type { Capabilities } from '../src/core/provider';
import { bootPolling, bootPollDelayMs } from '../src/core/polling';
import { breakdown, eventsOf, readyIndex, timeBreakdown, type TaskSpans } from './history';
import { startLab, type BootSchedule } from './lab';
import { bareLaunch, p1Steps, workflowLaunch, type LaunchTiming, type WorkflowRun } from './p1-overhead';
import { bootDurations, measureDetection, type DetectionSample } from './p3-detection';
import { measureConcurrency } from './p4-concurrency';
import { failoverOffers, failoverRun, FAILOVER_OFFERS } from './p5-failover';
import { k3sRun, P6_TUNING, type K3sRun } from './p6-k3s';
import { SimulatedK3sCloud } from '../test/k3s/sim/simulated-cloud';
import { dist, round, sleep, type Dist } from './stats';
import { measureRate } from './rate-limit';
import { P8_LAUNCHES, P8_PARALLEL, SLOW_ANSWER_MS, hedgedRuns, scarcityRuns } from './p8-scarcity';
import { P11_BOOT_MS, P11_NOTICE_MS, P11_SCALE, preemptRuns } from './p11-preempt';
import { TARGETS, targetText, verdict } from './targets';
import { teardownSignal, vmWorkflowId } from '../src/core/api';
import { startAttributes } from '../src/core/search-attributes';
import type { vmWorkflow } from '../src/workflows';

const quick = process.argv.includes('--quick');
const N = quick
  ? { p1: 2, p3PerSchedule: 5, p3TypicalMs: 8_000, p4: 100, p5: 2, rate: 100, p8: 6, p11: 2 }
  : { p1: 15, p3PerSchedule: 16, p3TypicalMs: 40_000, p4: 500, p5: 10, rate: 500, p8: P8_LAUNCHES, p11: 5 };
/** `--only P4,RATE,P8,P11`: run only these metrics (P2 and P5 run together); `--only SCALE`: bench/scale.ts. */
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set((process.argv[onlyArg + 1] ?? '').toUpperCase().split(',')) : undefined;
const want = (...metrics: string[]): boolean => !only || metrics.some((m) => only.has(m));
/** The `rate` fake cloud's activities-per-second limit (GCP's documented 1,500/min; src/core/rate-limits.ts). */
const RATE_LIMIT = 25;
const P4_BOOT_MS = 2_000;
/** Quiet time before each P5 run (see there). */
const P5_SETTLE_MS = 5_000;
const SCHEDULES: BootSchedule[] = ['fixed', 'backoff', 'boot-aware'];
/** A real cloud's polling capabilities, with the typical boot scaled down to fit the run. */
const P3_CAPS: Partial<Capabilities> = { pollIntervalMs: 5_000, typicalBootMs: N.p3TypicalMs, bootTimeoutMs: 10 * 60_000 };

const log = (s: string): void => void process.stderr.write(`[bench] ${s}\n`);

function scheduleDelay(s: BootSchedule, caps: Capabilities, elapsedMs: number): number | undefined {
  if (s === 'fixed') return caps.pollIntervalMs;
  if (s === 'boot-aware') return bootPollDelayMs(caps, elapsedMs);
  return undefined; // backoff: the retry policy of bootPolling(caps) decides
}

const ms = (d: Dist): string => `median ${round(d.median)} ms, p90 ${round(d.p90)} ms`;
type Row = [metric: string, value: string, target: string, verdict: string];

async function main(): Promise<void> {
  const started = Date.now();
  const rssAtStartMb = Math.round(process.memoryUsage.rss() / 2 ** 20);
  // P6's simulated k3s hosts: one cloud that runs boot scripts, one that does not (SSH push).
  const simRoot = mkdtempSync(join(tmpdir(), 'gpuprov-bench-k3s-'));
  const simBoot = new SimulatedK3sCloud('p6-boot', join(simRoot, 'boot'), { bootScript: true, openPorts: true });
  const simPush = new SimulatedK3sCloud('p6-push', join(simRoot, 'push'), { bootScript: false, openPorts: true });
  const lab = await startLab({
    extraProviders: [simBoot, simPush],
    log,
    scheduleDelay,
    fakes: [
      { name: 'p2' },
      ...SCHEDULES.map((s) => ({ name: `p3-${s}`, caps: P3_CAPS, schedule: s })),
      { name: 'p4', caps: { pollIntervalMs: 1_000, typicalBootMs: P4_BOOT_MS } },
      { name: 'p5' },
      { name: 'p8' },
      { name: 'p11', caps: { pollIntervalMs: 200, typicalBootMs: P11_BOOT_MS }, spot: { priceFactor: 0.4 } },
      // P8's hedged half: `fake` is the fake cloud whose hedge lanes are regions (src/core/hedge.ts);
      // on any other name one attempt holds the whole cloud and --parallel runs serially.
      { name: 'fake' },
      { name: 'rate', caps: { pollIntervalMs: 1_000, typicalBootMs: P4_BOOT_MS } },
    ],
    rateLimits: { rate: RATE_LIMIT },
    cluster: process.argv.includes('--cluster'),
  });
  const results: Record<string, unknown> = {};
  const rows: Row[] = [];
  try {
    log(`setup ${Date.now() - started} ms`);
    // The worker loads the prebuilt workflow bundle (src/server/workflow-bundle.ts): no webpack here.
    // heapLimitMb: `npm run bench` passes the workers' --max-old-space-size (see WORKER_NODE_FLAGS).
    results.rss = {
      atStartMb: rssAtStartMb,
      afterWorkerCreatedMb: Math.round(process.memoryUsage.rss() / 2 ** 20),
      heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
    };

    // ---- P1 ---------------------------------------------------------------------------------
    const p1Events: number[] = [];
    if (want('P1')) {
      log(`P1: ${N.p1} workflow and ${N.p1} bare launches on the local cloud, interleaved`);
      const wf: WorkflowRun[] = [];
      const bare: LaunchTiming[] = [];
      await bareLaunch(lab.local, lab.ssh, 'p1-warm'); // warm sshd binaries, page cache, ssh2
      await workflowLaunch(lab.client, lab.taskQueue, 'p1-warmwf');
      for (let i = 0; i < N.p1; i++) {
        const order = i % 2 === 0 ? ['wf', 'bare'] : ['bare', 'wf'];
        for (const which of order) {
          if (which === 'wf') {
            const r = await workflowLaunch(lab.client, lab.taskQueue, `p1-wf-${i}`);
            wf.push(r);
            p1Events.push(r.events.length);
          } else bare.push(await bareLaunch(lab.local, lab.ssh, `p1-bare-${i}`));
        }
      }
      const launchPlusTeardown = (t: LaunchTiming): number => t.launchMs + t.teardownMs;
      const wfD = dist(wf.map(launchPlusTeardown));
      const bareD = dist(bare.map(launchPlusTeardown));
      const pairDiff = wf.map((w, i) => launchPlusTeardown(w) - launchPlusTeardown(bare[i]!));
      const diffD = dist(pairDiff);
      const ratio = wfD.median / bareD.median;
      const p1Parts = wf.map((w) => timeBreakdown(w.events.slice(0, readyIndex(w.events) + 1)));
      results.P1 = {
        n: N.p1,
        workflowTimeToReadyBreakdown: {
          wtQueueMs: dist(p1Parts.map((p) => p.wtQueueMs)),
          wtRunMs: dist(p1Parts.map((p) => p.wtRunMs)),
          activityMs: dist(p1Parts.map((p) => p.activityMs)),
          workflowTasks: p1Parts[0]?.workflowTasks,
        },
        workflow: {
          launch: dist(wf.map((t) => t.launchMs)),
          teardown: dist(wf.map((t) => t.teardownMs)),
          launchPlusTeardown: wfD,
          totalWithTtlTimer: dist(wf.map((t) => t.totalMs)),
        },
        bare: { launch: dist(bare.map((t) => t.launchMs)), teardown: dist(bare.map((t) => t.teardownMs)), launchPlusTeardown: bareD },
        overheadPerLaunchMs: diffD,
        launchOnlyOverheadMs: dist(wf.map((w, i) => w.launchMs - bare[i]!.launchMs)),
        ratioOfMedians: round(ratio, 3),
      };
      rows.push(['P1 workflow launch+teardown', ms(wfD), '', '']);
      rows.push(['P1 bare script launch+teardown', ms(bareD), '', '']);
      rows.push([
        'P1 workflow time to Ready (medians)',
        `${p1Parts[0]?.workflowTasks ?? 0} workflow tasks: ${round(dist(p1Parts.map((p) => p.wtQueueMs)).median)} ms queued, ${round(dist(p1Parts.map((p) => p.wtRunMs)).median)} ms running; activities ${round(dist(p1Parts.map((p) => p.activityMs)).median)} ms`,
        '',
        '',
      ]);
      const steps = p1Steps(wf, bare);
      (results.P1 as Record<string, unknown>).stepsToReadyMedianMs = steps;
      rows.push([
        'P1 to Ready by step, medians: workflow (queued + running) vs bare',
        Object.entries(steps)
          .map(([k, v]) => `${k} ${v.queueMs} + ${v.runMs}${v.bareMs !== undefined ? ` vs ${v.bareMs}` : ''}`)
          .join('; '),
        '',
        '',
      ]);
      rows.push([
        'P1 overhead per launch (paired)',
        `${ms(diffD)}; ratio ${round(ratio, 2)}×`,
        targetText.P1,
        verdict(diffD.median <= TARGETS.P1.overheadMs && ratio <= TARGETS.P1.ratio),
      ]);
    }

    // ---- P2 ---------------------------------------------------------------------------------
    if (want('P2', 'P5')) {
      log('P2: history of a single-attempt launch with teardown');
      const h2 = await lab.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
        taskQueue: lab.taskQueue,
        workflowId: `${vmWorkflowId('p2-one')}-${Date.now()}`,
        // As GpuprovClient.start does: the run starts with its name and stage, so it upserts only what changes.
        typedSearchAttributes: startAttributes('p2-one'),
        args: [{ spec: { name: 'p2-one', clouds: ['p2'], k8s: 'off' }, tuning: { healthIntervalMs: 10 * 60_000 } }],
      });
      let ev2 = await eventsOf(h2);
      while (readyIndex(ev2) < 0) {
        await sleep(100);
        ev2 = await eventsOf(h2);
      }
      const launchEvents = readyIndex(ev2) + 1;
      await h2.signal(teardownSignal);
      await h2.result();
      ev2 = await eventsOf(h2);

      // ---- P5 (before P3/P4: it also feeds P2) ------------------------------------------------
      log(`P5: ${N.p5} failovers through ${FAILOVER_OFFERS} offers`);
      const p5 = lab.fake('p5');
      p5.setOffers(failoverOffers('p5'));
      const fo = [];
      for (let i = 0; i < N.p5; i++) {
        // Settle first: right after a run ends, the next one's workflow tasks waited 30-40 ms each
        // to be dispatched (about 100 ms per failed attempt instead of about 40; BENCHMARKS.md, P5).
        await sleep(P5_SETTLE_MS);
        fo.push(await failoverRun(lab.client, lab.taskQueue, p5, i));
      }
      // Back to back: the next run starts as soon as the last one ended (no quiet time).
      const b2b = [];
      for (let i = 0; i < N.p5; i++) b2b.push(await failoverRun(lab.client, lab.taskQueue, p5, N.p5 + i));
      const foD = dist(fo.map((r) => r.toTenthCreateMs));
      const b2bD = dist(b2b.map((r) => r.toTenthCreateMs));
      const perAttemptD = dist(fo.map((r) => r.perAttemptMs));
      const perExtra = (fo[0]!.eventsToReady - launchEvents) / (FAILOVER_OFFERS - 1);
      results.P5 = {
        n: N.p5,
        toTenthCreateMs: foD,
        perFailedAttemptMs: perAttemptD,
        backToBack: { toTenthCreateMs: b2bD, perFailedAttemptMs: dist(b2b.map((r) => r.perAttemptMs)) },
      };
      results.P2 = {
        singleAttemptLaunchEvents: launchEvents,
        singleAttemptLifecycleEvents: ev2.length,
        localCloudLifecycleEventsWithTtl: dist(p1Events),
        failoverLaunchEvents: fo[0]!.eventsToReady,
        perExtraAttemptEvents: round(perExtra, 1),
        lifecycleBreakdown: breakdown(ev2),
        failoverBreakdownToReady: breakdown(fo[0]!.events.slice(0, fo[0]!.eventsToReady)),
      };
      rows.push(['P2 events, single-attempt launch (to ready)', `${launchEvents}`, targetText.P2toReady, verdict(launchEvents <= TARGETS.P2.eventsToReady)]);
      rows.push(['P2 events, launch + teardown', `${ev2.length}`, '', '']);
      rows.push(['P2 events per extra failover attempt', `${round(perExtra, 1)}`, targetText.P2perAttempt, verdict(perExtra <= TARGETS.P2.perExtraAttempt)]);
      rows.push([
        `P5 start → 10th create (9 Capacity first), after ${P5_SETTLE_MS / 1000} s quiet`,
        `${ms(foD)}; ${ms(perAttemptD)} per failed attempt`,
        targetText.P5,
        verdict(foD.median <= TARGETS.P5.toTenthCreateMs),
      ]);
      rows.push(['P5 start → 10th create, back to back', ms(b2bD), targetText.P5backToBack, verdict(b2bD.median <= TARGETS.P5.backToBackMs)]);
    }

    // ---- P8 ---------------------------------------------------------------------------------
    if (want('P8')) {
      log(`P8: ${N.p8} launches one after another, 9 of 10 offers answering Capacity, and 5 with only the good offer interleaved`);
      const p8 = await scarcityRuns(lab.client, lab.taskQueue, lab.fake('p8'), N.p8);
      const restD = dist(p8.rest.map((r) => r.timeToReadyMs));
      const baseD = dist(p8.baseline.map((r) => r.timeToReadyMs));
      const ratio = restD.median / baseD.median;
      results.P8 = {
        n: N.p8,
        firstTimeToReadyMs: p8.first.timeToReadyMs,
        firstCreates: p8.first.creates,
        restTimeToReadyMs: restD,
        restEachMs: p8.rest.map((r) => r.timeToReadyMs),
        baselineEachMs: p8.baseline.map((r) => r.timeToReadyMs),
        restCreates: p8.rest.map((r) => r.creates),
        baselineTimeToReadyMs: baseD,
        ratioOfMedians: round(ratio, 3),
      };
      rows.push(['P8 launch 1 time to Ready (9 × Capacity first)', `${p8.first.timeToReadyMs} ms, ${p8.first.creates} creates`, '', '']);
      rows.push([
        `P8 launches 2–${N.p8} time to Ready vs no exhausted offer`,
        `${ms(restD)} vs ${ms(baseD)}: ${round(ratio, 2)}×; creates ${Math.max(...p8.rest.map((r) => r.creates))} max`,
        targetText.P8,
        verdict(ratio <= TARGETS.P8.ratio),
      ]);
      log(`P8: launch 1 again, every create answer taking ${SLOW_ANSWER_MS / 1000} s: serial, then --parallel ${P8_PARALLEL}`);
      const hedged = await hedgedRuns(lab.client, lab.taskQueue, lab.fake('fake'));
      results.P8Hedged = {
        slowAnswerMs: SLOW_ANSWER_MS,
        parallel: P8_PARALLEL,
        serialTimeToReadyMs: hedged.serial.timeToReadyMs,
        serialCreates: hedged.serial.creates,
        parallelTimeToReadyMs: hedged.parallel.timeToReadyMs,
        parallelCreates: hedged.parallel.creates,
      };
      rows.push([
        `P8 launch 1, ${SLOW_ANSWER_MS / 1000} s create answers: serial vs --parallel ${P8_PARALLEL}`,
        `${hedged.serial.timeToReadyMs} ms (${hedged.serial.creates} creates) vs ${hedged.parallel.timeToReadyMs} ms (${hedged.parallel.creates} creates): ${round(hedged.serial.timeToReadyMs / hedged.parallel.timeToReadyMs, 2)}× faster`,
        '',
        '',
      ]);
    }

    // ---- P11 --------------------------------------------------------------------------------
    if (want('P11')) {
      log(`P11: ${N.p11} spot preemptions under --recover, notice ${P11_NOTICE_MS} ms and boot ${P11_BOOT_MS} ms (120 s and 60 s ×${P11_SCALE})`);
      const p11 = await preemptRuns(lab.client, lab.taskQueue, lab.fake('p11'), N.p11);
      const toCreate = dist(p11.map((r) => r.noticeToCreateMs));
      const toReady = dist(p11.map((r) => r.noticeToReadyMs));
      const margin = dist(p11.map((r) => r.beforeDeadlineMs));
      const maxBilled = Math.max(...p11.map((r) => r.maxBilled));
      results.P11 = {
        n: N.p11,
        scale: P11_SCALE,
        noticeMs: P11_NOTICE_MS,
        bootMs: P11_BOOT_MS,
        noticeToCreateMs: toCreate,
        noticeToReadyMs: toReady,
        beforeDeadlineMs: margin,
        runs: p11,
        maxBilled,
      };
      rows.push([`P11 notice at the cloud → replacement created (the watcher's spot look)`, ms(toCreate), '≤ 5 s', verdict(toCreate.max <= 5_000)]);
      rows.push([`P11 notice → replacement Ready (notice ${P11_NOTICE_MS} ms, boot ${P11_BOOT_MS} ms)`, ms(toReady), '', '']);
      rows.push(['P11 replacement Ready before the deadline by', `${ms(margin)}; most billed at once ${maxBilled}`, '≤ 2 billed', verdict(maxBilled <= 2)]);
    }

    // ---- P3 ---------------------------------------------------------------------------------
    if (want('P3')) {
      const boots = bootDurations(N.p3TypicalMs, N.p3PerSchedule);
      log(
        `P3: ${N.p3PerSchedule} boots per schedule over ${boots[0]}–${boots[boots.length - 1]} ms (typical ${N.p3TypicalMs} ms, poll interval ${P3_CAPS.pollIntervalMs} ms), schedules in parallel`,
      );
      const p3: Record<string, { lag: Dist; callsPerMinute: Dist; samples: DetectionSample[] }> = {};
      await Promise.all(
        SCHEDULES.map(async (s) => {
          const fake = lab.fake(`p3-${s}`);
          fake.setBootMs(3_600_000); // Pending until the bench sets each instance's own boot time
          const samples = await measureDetection(lab.client, lab.taskQueue, fake, boots, s);
          p3[s] = { lag: dist(samples.map((x) => x.lagMs)), callsPerMinute: dist(samples.map((x) => x.callsPerMinute)), samples };
        }),
      );
      results.P3 = { caps: P3_CAPS, boots, backoffRetryPolicy: bootPolling(P3_CAPS as Capabilities), schedules: p3 };
      for (const s of SCHEDULES) {
        const r = p3[s]!;
        const ok = r.lag.median <= TARGETS.P3.lagMs && r.callsPerMinute.median <= TARGETS.P3.callsPerMinute;
        rows.push([
          `P3 detection lag / observe calls, ${s}`,
          `lag ${ms(r.lag)}; ${round(r.callsPerMinute.median, 1)} calls/min (p90 ${round(r.callsPerMinute.p90, 1)})`,
          s === 'boot-aware' ? targetText.P3 : '(compared)',
          s === 'boot-aware' ? verdict(ok) : '',
        ]);
      }
    }

    // ---- P4 ---------------------------------------------------------------------------------
    if (want('P4')) {
      log(`P4: ${N.p4} launches at once, ${P4_BOOT_MS} ms boot`);
      lab.fake('p4').setBootMs(P4_BOOT_MS);
      const p4 = await measureConcurrency(lab.client, lab.taskQueue, 'p4', N.p4, P4_BOOT_MS, quick ? 30_000 : 240_000, () => lab.serverCpuS());
      results.P4 = p4;
      rows.push([
        `P4 time per VM to Ready (medians)`,
        `${p4.perVmToReady.workflowTasks} workflow tasks: ${p4.perVmToReady.wtQueueMs} ms queued for the worker, ${p4.perVmToReady.wtRunMs} ms running; activities ${p4.perVmToReady.activityMs} ms; CPU bench ${p4.cpuS.bench} s, server ${p4.cpuS.server} s`,
        '',
        '',
      ]);
      const spans = (x: TaskSpans): string => `${x.tasks} tasks, p50 ${x.p50Ms} / p95 ${x.p95Ms} / max ${x.maxMs} ms`;
      rows.push([
        `P4 account watcher's / ledger pages' workflow tasks during the launch`,
        `${spans(p4.helperTasks.watcher)}; ${spans(p4.helperTasks.pages)}`,
        '',
        '',
      ]);
      rows.push([
        `P4 ${N.p4} concurrent launches`,
        `wall ${p4.wallMs} ms, ${p4.ready}/${p4.n} Ready, RSS peak ${p4.rssPeakMb} MB (before ${p4.rssBeforeMb}; ${(results.rss as { afterWorkerCreatedMb: number }).afterWorkerCreatedMb} after the worker was created, ${rssAtStartMb} at start), events ${p4.eventsToReadyTotal} to ready / ${p4.eventsLifecycleTotal} lifecycle`,
        targetText.P4,
        verdict(p4.allReady && p4.wallMs <= P4_BOOT_MS + TARGETS.P4.overBootMs && p4.rssPeakMb <= TARGETS.P4.rssMb),
      ]);
    }

    // ---- Rate: N launches under the cloud queue's activities-per-second limit ----------------
    if (want('RATE')) {
      log(`RATE: ${N.rate} launches at once on a cloud limited to ${RATE_LIMIT}/s, then teardown`);
      lab.fake('rate').setBootMs(P4_BOOT_MS);
      const r = await measureRate(lab.client, lab.taskQueue, lab.fake('rate'), lab.activityStarts, N.rate, RATE_LIMIT, quick ? 120_000 : 600_000);
      results.RATE = r;
      const types = Object.entries(r.activityStarts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      const calls = Object.entries(r.apiCalls)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      rows.push([
        `RATE ${N.rate} launches + teardowns, cloud limited to ${RATE_LIMIT}/s`,
        `vendor calls: max ${r.maxApiCallsPer1s} in any 1 s (${calls}); cloud activity starts: max ${r.maxActivityStartsPer1s} in any 1 s, ` +
          `${r.maxActivityStartsPerSOver10s}/s over any 10 s, run mean ${r.meanActivityStartsPerS}/s (${types}); ` +
          `${r.ready}/${r.n} Ready in ${round(r.readyMs / 1000, 1)} s, all gone in ${round(r.goneMs / 1000, 1)} s`,
        `vendor calls ≤ ${RATE_LIMIT} in every 1 s; activities ≤ ${RATE_LIMIT}/s over 10 s`,
        verdict(r.ready === r.n && r.maxApiCallsPer1s <= RATE_LIMIT && r.maxActivityStartsPerSOver10s <= RATE_LIMIT),
      ]);
    }
    rows.push(['P9 stall after a server outage', 'measured by the cluster suite (test/cluster/cluster.test.ts prints it), not here', targetText.P9, '']);

    // ---- P6 ---------------------------------------------------------------------------------
    if (want('P6')) {
      const n6 = quick ? 1 : 3;
      log(`P6: ${n6} boot-installed and ${n6} SSH-pushed k3s installs on the simulated k3s host`);
      const p6: Record<'boot' | 'push', K3sRun[]> = { boot: [], push: [] };
      for (let i = 0; i < n6; i++) {
        p6.boot.push(await k3sRun(lab.client, lab.taskQueue, simBoot, 'boot', i));
        p6.push.push(await k3sRun(lab.client, lab.taskQueue, simPush, 'push', i));
      }
      results.P6 = { host: 'simulated k3s host (test/k3s/sim)', tuning: P6_TUNING, runs: p6 };
      for (const route of ['boot', 'push'] as const) {
        rows.push([
          `P6 k3s VM ready → cluster ready, ${route === 'boot' ? 'boot-installed' : 'SSH push'}`,
          `${ms(dist(p6[route].map((r) => r.clusterMs)))} (simulated host)`,
          '',
          '',
        ]);
      }
    }
  } finally {
    await lab.close().catch((err: unknown) => log(`close: ${String(err)}`));
    await simBoot.close().catch(() => undefined);
    await simPush.close().catch(() => undefined);
    rmSync(simRoot, { recursive: true, force: true });
  }

  const meta = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    node: process.version,
    nproc: cpus().length,
    memoryGb: round(totalmem() / 1024 ** 3, 1),
    cpu: cpus()[0]?.model ?? '?',
    temporalCli: lab.cliVersion,
    gitCommit: (() => {
      try {
        return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      } catch {
        return '?';
      }
    })(),
    n: N,
    durationMs: Date.now() - started,
  };
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = only ? `latest-${[...only].join('-').toLowerCase()}.json` : 'latest.json';
  writeFileSync(join(dir, file), `${JSON.stringify({ meta, results }, null, 2)}\n`);

  const widths = [0, 1, 2, 3].map((c) => Math.max(...[['metric', 'value', 'target', 'verdict'], ...rows].map((r) => r[c]!.length)));
  const line = (r: string[]): string => r.map((x, c) => x.padEnd(widths[c]!)).join(' | ');
  process.stdout.write(`\ngpuprov bench (${meta.mode}) ${meta.date} — node ${meta.node}, ${meta.nproc} cores, ${meta.memoryGb} GB, ${meta.temporalCli}\n\n`);
  process.stdout.write(`${line(['metric', 'value', 'target', 'verdict'])}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
  process.stdout.write(`\nwrote bench/results/${file} (${round(meta.durationMs / 1000, 1)} s)\n`);
}

/** `--only SCALE [--sizes …]`: the scale bench (bench/scale.ts), alone: it runs a fresh lab per size. */
async function entry(): Promise<void> {
  if (!only?.has('SCALE')) return main();
  if (only.size > 1) {
    process.stderr.write('bench: --only SCALE runs alone (a fresh lab per size); run the other metrics with their own --only\n');
    process.exit(2);
  }
  const rest = process.argv.slice(2).filter((_, i, a) => a[i] !== '--only' && a[i - 1] !== '--only');
  await (await import('./scale')).main(rest);
}

entry().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
