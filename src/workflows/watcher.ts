/**
 * accountWatcherWorkflow (ID `gpuprov-watch:<deployment>:<cloud>:<region>`): one per deployment,
 * cloud account and region. Each cycle takes one view (the cloud's inventory and the open
 * vmWorkflows there), tells Ready VMs whose instance is gone (`instanceLost`), and deletes
 * orphans (VM names its ledger records creating, no open workflow owns) after their grace; tagged
 * instances it has no record of are shown as unknown, never deleted unless the operator names
 * them. Decisions: `planCycle` in src/core/watcher.ts, the ledger in src/core/watcher-ledger.ts.
 * Continues as new to bound its history, carrying the ledger, first-seen times and recent sweeps.
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
import { instanceLostSignal } from '../core/api';
import {
  sweepNowUpdate,
  watcherNudgeSignal,
  watcherRecordSignal,
  watcherStateQuery,
  type SweepRecord,
  type SweepRequest,
  type WatcherState,
  type WatcherTuning,
} from '../core/watcher-api';
import { keepLedger, recordCreates, recordedKeys, recordedNames, type LedgerEntry } from '../core/watcher-ledger';
import { lossMessage } from '../core/loss';
import { METRICS } from '../core/metrics';
import { WATCHER_PARALLEL_SWEEP_PATCH } from '../core/patches';
import { planCycle, withWatcherTuning, type OrphanSeen, type WatcherInput } from '../core/watcher';
import { failureMessage } from './failure-info';
import { sweeping, watchingLong } from './proxies';
import type { WatchView } from '../activities/watcher';

/** Budget of one orphan deletion (delete, wait until gone, clean up). */
const SWEEP_DEADLINE_MS = 2 * 60_000;

/** A record wakes the watcher (cancels its long poll) at most this often: a burst of creates costs one look, not one each. */
const RECORD_WAKE_MS = 2_000;

const iso = (ms: number): string => new Date(ms).toISOString();

export async function accountWatcherWorkflow(input: WatcherInput): Promise<void> {
  let tuning = input.tuning;
  let t = withWatcherTuning(tuning);
  const at = { cloud: input.cloud, region: input.region };
  const where = `${at.cloud}/${at.region}`;
  let orphans: OrphanSeen[] = input.carried?.orphans ?? [];
  let unknown: OrphanSeen[] = input.carried?.unknown ?? [];
  let ledger: LedgerEntry[] = input.carried?.ledger ?? [];
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
  let includeUnknown: string[] = [];
  let wokenAtMs = -Infinity;
  let lastSwept: SweepRecord[] = [];
  /** The long-polling cycle in flight: a nudge or a sweep request cancels it to look at once. */
  let polling: CancellationScope | undefined;
  let lastSignature: string | undefined;
  const adopt = (latest: Partial<WatcherTuning> | undefined): void => {
    if (!latest || Object.keys(latest).length === 0) return;
    tuning = { ...tuning, ...latest };
    t = withWatcherTuning(tuning);
  };
  const wake = (): void => {
    wokenAtMs = Date.now();
    nudges += 1;
    polling?.cancel();
  };
  setHandler(watcherNudgeSignal, (latest) => {
    adopt(latest);
    wake();
  });
  setHandler(watcherRecordSignal, (rec) => {
    adopt(rec.tuning);
    ledger = recordCreates(ledger, rec.vmNames, Date.now(), rec.createKeys);
    state.ledger = ledger.length;
    if (Date.now() - wokenAtMs >= RECORD_WAKE_MS) wake();
  });
  setHandler(watcherStateQuery, () => state);
  setHandler(sweepNowUpdate, async (req?: SweepRequest) => {
    includeUnknown = [...new Set([...includeUnknown, ...(req?.includeUnknown ?? [])])];
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
          recorded: [...recordedNames(ledger)],
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
    const named = asked > sweepDone ? includeUnknown : [];
    const plan = planCycle(view, [...orphans, ...unknown], now, t, {
      recorded: recordedNames(ledger),
      createKeys: recordedKeys(ledger),
      sweepNow: asked > sweepDone,
      includeUnknown: named,
    });
    ledger = keepLedger(ledger, view, now, t);
    unknown = plan.unknown;
    for (const l of plan.lost) {
      const reason = lossMessage(l.cause);
      log.warn('instance lost: telling its VM', { vmName: l.vmName, workflowId: l.workflowId, reason });
      try {
        await getExternalWorkflowHandle(l.workflowId).signal(instanceLostSignal, { instanceIds: l.instanceIds, cause: l.cause, reason });
      } catch {
        // The VM's workflow closed since the view was taken: nobody to tell.
      }
    }
    const createKeysFor = (vmName: string): { createKeys?: string[] } => {
      const keys = ledger.find((e) => e.vmName === vmName)?.createKeys;
      return keys?.length ? { createKeys: keys } : {};
    };
    const sweepOne = async (o: OrphanSeen): Promise<SweepRecord> => {
      const by: SweepRecord['by'] = named.includes(o.vmName) ? 'operator' : asked > sweepDone ? 'now' : 'grace';
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
          ...createKeysFor(o.vmName),
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
    if (asked > sweepDone) includeUnknown = [];
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
      unknown: unknown.map((o) => ({
        vmName: o.vmName,
        instanceIds: o.instanceIds,
        ...(o.sideResources ? { sideResources: o.sideResources } : {}),
        firstSeenAt: iso(o.firstSeenAtMs),
      })),
      ledger: ledger.length,
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
        carried: { orphans, unknown, ledger, sweeps, cycles: state.cycles, looks: state.looks, beats: state.beats ?? 0 },
      });
    }
    // A deletion that failed is tried again after a fast interval, not at once.
    if (swept.some((r) => !r.ok)) await sleep(t.fastIntervalMs);
  }
}
