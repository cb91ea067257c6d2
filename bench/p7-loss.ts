/**
 * P7 (issue 16): loss detection by the account watcher. `npx tsx bench/p7-loss.ts [--n 20]`:
 * launches Ready VMs on the local cloud one after another, kills each one's sshd behind the
 * product's back, and times kill → stage `lost` (p50, p95). Then scales the watcher's idle cost
 * (one inventory call and one heartbeat per look, one activity per quiet window) to one idle
 * Ready VM-day at 100 VMs in one account at the shipped cadence.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { statusQuery, watcherStateQuery, type VmStatus } from '../src/core/api';
import { DEFAULT_WATCHER_TUNING, watcherWorkflowId } from '../src/core/watcher';
import type { vmWorkflow } from '../src/workflows';
import { startLab } from './lab';
import { percentile, round, sleep } from './stats';

const argN = process.argv.indexOf('--n');
const N = argN > 0 ? Number(process.argv[argN + 1]) : 20;
const log = (s: string): void => void process.stderr.write(`[p7] ${s}\n`);

async function until<T>(look: () => Promise<T | undefined>, what: string, looks = 1_200): Promise<T> {
  for (let i = 0; i < looks; i++) {
    const v = await look().catch(() => undefined);
    if (v !== undefined) return v;
    await sleep(100);
  }
  throw new Error(`p7: timed out waiting for ${what}`);
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
        args: [{ spec: { name, clouds: ['local'], regions: ['local-a'] } }],
      });
      const ready = await until(async () => {
        const s = await h.query(statusQuery);
        return s.stage === 'ready' ? s : undefined;
      }, `${name} ready`);
      // The watcher has seen it (its cycle counts it as an owner): from here on a loss is its to find.
      await until(async () => ((await lab.client.workflow.getHandle(watcherId).query(watcherStateQuery)).owners > 0 ? true : undefined), 'watcher sees the VM');
      const id = ready.instanceIds[0]!;
      const pid = Number(readFileSync(join(lab.localRoot, 'instances', id, 'pid'), 'utf8').trim());
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      const lost = await until(async () => {
        const s: VmStatus = await h.query(statusQuery);
        return s.stage === 'lost' ? Date.now() : undefined;
      }, `${name} lost`);
      lags.push(lost - killedAt);
      log(`${name}: lost after ${lost - killedAt} ms`);
      await h.result().catch(() => undefined);
    }
    const history = await lab.client.workflow.getHandle(watcherId).fetchHistory();
    const events = history.events ?? [];
    const state = await lab.client.workflow.getHandle(watcherId).query(watcherStateQuery);
    const activities = events.filter((e) => e.activityTaskScheduledEventAttributes).length;
    const timers = events.filter((e) => e.timerStartedEventAttributes).length;
    const t = DEFAULT_WATCHER_TUNING;
    // An idle Ready account: one inventory call and one heartbeat per fast look, one watchCycle activity per quiet window.
    const looksPerDay = 86_400_000 / t.fastIntervalMs;
    const cyclesPerDay = 86_400_000 / t.quietWindowMs;
    const out = {
      n: lags.length,
      lossToLostMs: { p50: round(percentile(lags, 50)), p95: round(percentile(lags, 95)), max: round(Math.max(...lags)) },
      watcherThisRun: { cycles: state.cycles, looks: state.looks, events: events.length, activities, timers },
      idleReadyVmDayAt100: {
        watcherActions: round((looksPerDay + cyclesPerDay) / 100, 1),
        inventoryCalls: round(looksPerDay / 100, 1),
        perVmBackstop: { observeCalls: 86_400_000 / 3_600_000, actions: (2 * 86_400_000) / 3_600_000 },
        note: `fast look every ${t.fastIntervalMs} ms, quiet window ${t.quietWindowMs} ms; each VM also runs its own 1 h backstop health check`,
      },
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    await lab.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
