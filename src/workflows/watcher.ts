/**
 * accountWatcherWorkflow (ID `gpuprov-watch:<deployment>:<cloud>:<region>`): one per deployment,
 * cloud account and region. Each cycle takes one view (the cloud's inventory and the open
 * vmWorkflows there), tells Ready VMs whose instance is gone (`instanceLost`), and deletes
 * orphans after their grace. Decisions: `planCycle` in src/core/watcher.ts. Continues as new to
 * bound its history, carrying the orphans' first-seen times and the recent sweeps.
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  metricMeter,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { instanceLostSignal, sweepNowUpdate, watcherNudgeSignal, watcherStateQuery, type SweepRecord, type WatcherState } from '../core/api';
import { METRICS } from '../core/metrics';
import { WATCHER_PARALLEL_SWEEP_PATCH } from '../core/patches';
import { planCycle, withWatcherTuning, type OrphanSeen, type WatcherInput } from '../core/watcher';
import { failureMessage } from './failure-info';
import { sweeping, watchingLong } from './proxies';
import type { WatchView } from '../activities/watcher';

/** Budget of one orphan deletion (delete, wait until gone, clean up). */
const SWEEP_DEADLINE_MS = 2 * 60_000;

const iso = (ms: number): string => new Date(ms).toISOString();

export async function accountWatcherWorkflow(input: WatcherInput): Promise<void> {
  let tuning = input.tuning;
  let t = withWatcherTuning(tuning);
  const at = { cloud: input.cloud, region: input.region };
  const where = `${at.cloud}/${at.region}`;
  let orphans: OrphanSeen[] = input.carried?.orphans ?? [];
  let sweeps: SweepRecord[] = input.carried?.sweeps ?? [];
  const state: WatcherState = {
    deployment: input.deployment,
    ...at,
    cycles: input.carried?.cycles ?? 0,
    looks: input.carried?.looks ?? 0,
    beats: input.carried?.beats ?? 0,
    fast: false,
    instances: 0,
    owners: 0,
    orphans: [],
    sweeps,
  };
  let nudges = 0;
  let sweepAsked = 0;
  let sweepDone = 0;
  let lastSwept: SweepRecord[] = [];
  /** The long-polling cycle in flight: a nudge or a sweep request cancels it to look at once. */
  let polling: CancellationScope | undefined;
  let lastSignature: string | undefined;
  setHandler(watcherNudgeSignal, (latest) => {
    if (latest && Object.keys(latest).length > 0) {
      tuning = { ...tuning, ...latest };
      t = withWatcherTuning(tuning);
    }
    nudges += 1;
    polling?.cancel();
  });
  setHandler(watcherStateQuery, () => state);
  setHandler(sweepNowUpdate, async () => {
    const ticket = ++sweepAsked;
    polling?.cancel();
    await condition(() => sweepDone >= ticket);
    return lastSwept;
  });

  let nudgesSeen = nudges;
  for (;;) {
    const asked = sweepAsked;
    // After a nudge or with a sweep asked: one look, at once; else long-poll from the last view.
    const quick = asked > sweepDone || nudges !== nudgesSeen;
    nudgesSeen = nudges;
    let view: WatchView;
    const scope = new CancellationScope();
    polling = scope;
    try {
      view = await scope.run(() =>
        watchingLong(`inventory of ${where}`, t.quietWindowMs, t.heartbeatTimeoutMs, input.cloud).watchCycle({
          at,
          taskQueue: workflowInfo().taskQueue,
          known: orphans,
          tuning: t,
          ...(quick || lastSignature === undefined ? {} : { lastSignature }),
        }),
      );
    } catch (err) {
      if (!isCancellation(err)) {
        log.warn('watch cycle failed; looking again after a fast interval', { cloud: at.cloud, region: at.region, error: failureMessage(err) });
        await sleep(t.fastIntervalMs);
      }
      continue;
    } finally {
      polling = undefined;
    }
    lastSignature = view.signature;
    const now = Date.now();
    const plan = planCycle(view, orphans, now, t, asked > sweepDone);
    for (const l of plan.lost) {
      log.warn('instance lost: telling its VM', { vmName: l.vmName, workflowId: l.workflowId, reason: l.reason });
      try {
        await getExternalWorkflowHandle(l.workflowId).signal(instanceLostSignal, { instanceIds: l.instanceIds, reason: l.reason });
      } catch {
        // The VM's workflow closed since the view was taken: nobody to tell.
      }
    }
    const by: SweepRecord['by'] = asked > sweepDone ? 'now' : 'grace';
    const sweepOne = async (o: OrphanSeen): Promise<SweepRecord> => {
      const rec: SweepRecord = {
        vmName: o.vmName,
        instanceIds: o.instanceIds,
        ...(o.sideResources ? { sideResources: o.sideResources } : {}),
        firstSeenAt: iso(o.firstSeenAtMs),
        sweptAt: '',
        by,
        ok: true,
      };
      try {
        await sweeping(
          `delete orphan ${o.vmName} (${[...o.instanceIds, ...(o.sideResources ?? [])].join(', ')}) in ${where}`,
          SWEEP_DEADLINE_MS,
          input.cloud,
        ).releaseAt({
          at,
          vmName: o.vmName,
          instanceIds: o.instanceIds,
          mode: 'full',
          pollIntervalMs: 1_000,
          deadlineAtMs: Date.now() + SWEEP_DEADLINE_MS,
        });
        metricMeter
          .createCounter(METRICS.orphansSwept, '1', 'orphaned instances deleted by the account watcher')
          .add(o.instanceIds.length, { cloud: at.cloud });
        log.info('orphan deleted', { vmName: o.vmName, instanceIds: o.instanceIds });
      } catch (err) {
        rec.ok = false;
        rec.error = failureMessage(err);
        log.warn('orphan deletion failed; retrying next cycle', { vmName: o.vmName, error: rec.error });
      }
      rec.sweptAt = iso(Date.now());
      return rec;
    };
    const swept: SweepRecord[] = [];
    // Orphans due together are deleted side by side (a cloud's delete-and-wait takes minutes);
    // histories from before the patch deleted them one after another.
    if (plan.due.length > 1 && patched(WATCHER_PARALLEL_SWEEP_PATCH)) swept.push(...(await Promise.all(plan.due.map(sweepOne))));
    else for (const o of plan.due) swept.push(await sweepOne(o));
    if (plan.due.length === 0) orphans = plan.orphans;
    else orphans = plan.orphans.filter((o) => !swept.some((s) => s.ok && s.vmName === o.vmName));
    sweeps = [...sweeps, ...swept].slice(-t.keepSweeps);
    lastSwept = swept;
    sweepDone = asked;
    Object.assign(state, {
      cycles: state.cycles + 1,
      looks: state.looks + view.looks,
      beats: (state.beats ?? 0) + (view.beats ?? 0),
      lastCycleAt: iso(now),
      nextCycleAt: iso(Date.now() + plan.nextCycleInMs),
      fast: plan.fast,
      cadence: plan.cadence,
      instances: view.instances.length,
      owners: view.owners.length,
      orphans: orphans.map((o) => ({
        vmName: o.vmName,
        instanceIds: o.instanceIds,
        ...(o.sideResources ? { sideResources: o.sideResources } : {}),
        firstSeenAt: iso(o.firstSeenAtMs),
        deleteAfter: iso(o.firstSeenAtMs + t.orphanGraceMs),
      })),
      sweeps,
    });

    const info = workflowInfo();
    // Hazard: a sweepNow asked during this cycle waits for the next one, in this run: never
    // continue as new while one is pending (its handler would block allHandlersFinished forever).
    if ((info.continueAsNewSuggested || info.historyLength > t.continueAsNewAfterEvents) && sweepAsked === sweepDone) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof accountWatcherWorkflow>({
        ...input,
        ...(tuning ? { tuning } : {}),
        carried: { orphans, sweeps, cycles: state.cycles, looks: state.looks, beats: state.beats ?? 0 },
      });
    }
    // A deletion that failed is tried again after a fast interval, not at once.
    if (swept.some((r) => !r.ok)) await sleep(t.fastIntervalMs);
  }
}
