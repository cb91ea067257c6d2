/**
 * Sweep timing (issue 16). `npx tsx bench/sweep.ts [--n 10] [--grace-s 20]`: launches N Ready VMs
 * on the local cloud at once, then terminates their workflows one after another a few seconds
 * apart (each leaves an orphan: a running instance no open workflow owns) and times, per orphan,
 * terminate → the watcher's deletion (its sweep record's `sweptAt`), with the orphan grace shrunk
 * to `--grace-s` and the shipped cadence otherwise. Reports p50/p95/max against grace + one
 * `ready` look (the bound the chaos invariant checks: deleted within the grace plus one cycle),
 * and how long the deletion itself took once due.
 */
import { statusQuery, type VmStatus } from '../src/core/api';
import { startAttributes } from '../src/core/search-attributes';
import { watcherStateQuery, type SweepRecord } from '../src/core/watcher-api';
import { DEFAULT_WATCHER_TUNING, watcherWorkflowId } from '../src/core/watcher';
import { countLive } from '../src/providers/local';
import type { vmWorkflow } from '../src/workflows';
import { startLab } from './lab';
import { percentile, round, sleep, until } from './stats';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('--n', 10);
const GRACE_MS = arg('--grace-s', 20) * 1_000;
/** Between two terminations: orphans fall at different points of the watcher's cycle. */
const SPACING_MS = 3_000;
/** Looks of 100 ms before a wait gives up. */
const PATIENCE = 3_000;
const log = (s: string): void => void process.stderr.write(`[sweep] ${s}\n`);

async function main(): Promise<void> {
  const t = { ...DEFAULT_WATCHER_TUNING, orphanGraceMs: GRACE_MS };
  const lab = await startLab({ fakes: [], scheduleDelay: () => undefined, log, watcher: { orphanGraceMs: GRACE_MS } });
  const watcher = lab.client.workflow.getHandle(watcherWorkflowId('default', 'local', 'local-a'));
  try {
    const stamp = Date.now();
    const handles = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        lab.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
          taskQueue: lab.taskQueue,
          workflowId: `vm-sweep-${i}-${stamp}`,
          typedSearchAttributes: startAttributes(`sweep-${i}-${stamp}`),
          args: [{ spec: { name: `sweep-${i}-${stamp}`, clouds: ['local'], regions: ['local-a'] } }],
        }),
      ),
    );
    for (const h of handles) {
      await until(async () => (await h.query<VmStatus>(statusQuery)).stage === 'ready' || undefined, `${h.workflowId} ready`, PATIENCE);
    }
    log(`${N} VMs ready; terminating their workflows ${SPACING_MS} ms apart (grace ${GRACE_MS} ms)`);
    const terminatedAt = new Map<string, number>();
    for (const [i, h] of handles.entries()) {
      terminatedAt.set(`sweep-${i}-${stamp}`, Date.now());
      await h.terminate('bench: orphan');
      await sleep(SPACING_MS);
    }
    const records = await until(
      async () => {
        const s = await watcher.query(watcherStateQuery);
        const done = s.sweeps.filter((r) => terminatedAt.has(r.vmName) && r.ok);
        return done.length >= N ? done : undefined;
      },
      'every orphan deleted',
      (GRACE_MS + N * SPACING_MS + 5 * 60_000) / 100,
    );
    const byName = new Map<string, SweepRecord>(records.map((r) => [r.vmName, r]));
    const lags = [...terminatedAt].map(([name, at]) => Date.parse(byName.get(name)!.sweptAt) - at);
    const seen = [...terminatedAt].map(([name, at]) => Date.parse(byName.get(name)!.firstSeenAt) - at);
    // Due → deleted: the deletion itself (delete, wait until gone, clean up), on top of grace + one look.
    const deleting = records.map((r) => Date.parse(r.sweptAt) - Date.parse(r.firstSeenAt) - GRACE_MS);
    const bound = GRACE_MS + t.readyIntervalMs;
    const state = await watcher.query(watcherStateQuery);
    const out = {
      n: lags.length,
      graceMs: GRACE_MS,
      cadence: { fastMs: t.fastIntervalMs, readyMs: t.readyIntervalMs, slowMs: t.slowIntervalMs },
      terminateToDeletedMs: { p50: round(percentile(lags, 50)), p95: round(percentile(lags, 95)), max: round(Math.max(...lags)) },
      terminateToFirstSeenMs: { p50: round(percentile(seen, 50)), p95: round(percentile(seen, 95)), max: round(Math.max(...seen)) },
      dueToDeletedMs: { p50: round(percentile(deleting, 50)), p95: round(percentile(deleting, 95)), max: round(Math.max(...deleting)) },
      boundMs: bound,
      withinBound: lags.filter((l) => l <= bound).length,
      liveInstancesLeft: countLive(lab.localRoot),
      watcher: { cycles: state.cycles, looks: state.looks, beats: state.beats },
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    await watcher.terminate('bench over').catch(() => undefined);
    await lab.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
