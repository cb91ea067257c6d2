/**
 * P7 (issue 16): loss detection by the account watcher. `npx tsx bench/p7-loss.ts [--n 20]`:
 * launches Ready VMs on the local cloud one after another, kills each one's sshd behind the
 * product's back, and times kill → stage `lost` (p50, p95). Then scales the idle cost to one
 * idle Ready VM-day at 100 VMs in one account at the shipped cadence (`idleDay`): cloud calls =
 * the watcher's inventory calls (one per `ready` look) + each VM's backstop `observe`; Temporal
 * actions = the watcher's activities (one per quiet window) + its heartbeats (every half the
 * heartbeat timeout; the worker's 3 s throttle is shorter, so each one reaches the server) +
 * its timers and signals (none while idle) + each VM's backstop (a timer and an activity).
 */
import { startAttributes } from '../src/core/search-attributes';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { statusQuery, type VmStatus } from '../src/core/api';
import { watcherStateQuery, type WatcherTuning } from '../src/core/watcher-api';
import { DEFAULT_TUNING } from '../src/core/tuning';
import { DEFAULT_WATCHER_TUNING, heartbeatEveryMs, watcherWorkflowId } from '../src/core/watcher';
import type { vmWorkflow } from '../src/workflows';
import { startLab } from './lab';
import { percentile, round, sleep, until } from './stats';

const argN = process.argv.indexOf('--n');
const N = argN > 0 ? Number(process.argv[argN + 1]) : 20;
/** Looks of 100 ms before a wait gives up. */
const PATIENCE = 1_200;
const log = (s: string): void => void process.stderr.write(`[p7] ${s}\n`);

const DAY_MS = 86_400_000;

/** One idle Ready VM-day's cost at `vms` Ready VMs in one account and region (see the header). */
export function idleDay(t: WatcherTuning, healthIntervalMs: number, vms: number) {
  const looksPerDay = DAY_MS / t.readyIntervalMs;
  // A cycle returns once its next look would pass the quiet window: one activity per window.
  const activitiesPerDay = DAY_MS / t.quietWindowMs;
  // Its first beat at the start, then one every `heartbeatEveryMs` while it runs.
  const beatsPerActivity = 1 + Math.floor((t.quietWindowMs - 1) / heartbeatEveryMs(t));
  const heartbeatsPerDay = activitiesPerDay * beatsPerActivity;
  const backstopChecks = DAY_MS / healthIntervalMs;
  const watcher = { inventoryCalls: looksPerDay, activities: activitiesPerDay, heartbeats: heartbeatsPerDay, timers: 0, signals: 0 };
  return {
    perAccountDay: watcher,
    perVm: {
      cloudCalls: round(looksPerDay / vms + backstopChecks, 1),
      actions: round((activitiesPerDay + heartbeatsPerDay) / vms + 2 * backstopChecks, 1),
      watcherCalls: round(looksPerDay / vms, 1),
      watcherActions: round((activitiesPerDay + heartbeatsPerDay) / vms, 1),
      backstop: { observeCalls: backstopChecks, actions: 2 * backstopChecks },
    },
    note:
      `ready look every ${t.readyIntervalMs} ms (fast ${t.fastIntervalMs} ms while a VM launches, slow ${t.slowIntervalMs} ms with none), ` +
      `quiet window ${t.quietWindowMs} ms, heartbeat every ${heartbeatEveryMs(t)} ms (timeout ${t.heartbeatTimeoutMs} ms), per-VM backstop every ${healthIntervalMs} ms`,
  };
}

async function main(): Promise<void> {
  const lab = await startLab({ fakes: [], scheduleDelay: () => undefined, log });
  const watcherId = watcherWorkflowId('default', 'local', 'local-a');
  const lags: number[] = [];
  try {
    for (let i = 0; i < N; i++) {
      const name = `p7-${i}-${Date.now()}`;
      const h = await lab.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
        taskQueue: lab.taskQueue,
        workflowId: `vm-${name}`,
        typedSearchAttributes: startAttributes(name),
        args: [{ spec: { name, clouds: ['local'], regions: ['local-a'] } }],
      });
      const ready = await until(
        async () => {
          const s = await h.query(statusQuery);
          return s.stage === 'ready' ? s : undefined;
        },
        `${name} ready`,
        PATIENCE,
      );
      // The watcher has seen it Ready (its `ready` cadence): from here on a loss is its to find. The
      // kill then falls at a random point of the look interval, not right after the nudge's look.
      await until(
        async () => ((await lab.client.workflow.getHandle(watcherId).query(watcherStateQuery)).cadence === 'ready' ? true : undefined),
        'watcher sees the VM Ready',
        PATIENCE,
      );
      await sleep(Math.floor(Math.random() * DEFAULT_WATCHER_TUNING.readyIntervalMs));
      const id = ready.instanceIds[0]!;
      const pid = Number(readFileSync(join(lab.localRoot, 'instances', id, 'pid'), 'utf8').trim());
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      const lost = await until(
        async () => {
          const s: VmStatus = await h.query(statusQuery);
          return s.stage === 'lost' ? Date.now() : undefined;
        },
        `${name} lost`,
        PATIENCE,
      );
      lags.push(lost - killedAt);
      log(`${name}: lost after ${lost - killedAt} ms`);
      await h.result().catch(() => undefined);
    }
    const history = await lab.client.workflow.getHandle(watcherId).fetchHistory();
    const events = history.events ?? [];
    const state = await lab.client.workflow.getHandle(watcherId).query(watcherStateQuery);
    const activities = events.filter((e) => e.activityTaskScheduledEventAttributes).length;
    const timers = events.filter((e) => e.timerStartedEventAttributes).length;
    const out = {
      n: lags.length,
      lossToLostMs: { p50: round(percentile(lags, 50)), p95: round(percentile(lags, 95)), max: round(Math.max(...lags)) },
      watcherThisRun: { cycles: state.cycles, looks: state.looks, beats: state.beats, events: events.length, activities, timers },
      idleReadyVmDayAt100: idleDay(DEFAULT_WATCHER_TUNING, DEFAULT_TUNING.healthIntervalMs, 100),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    await lab.close();
  }
}

if (process.argv.includes('--model'))
  process.stdout.write(JSON.stringify(idleDay(DEFAULT_WATCHER_TUNING, DEFAULT_TUNING.healthIntervalMs, 100), null, 2) + '\n');
else
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
