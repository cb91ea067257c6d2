/**
 * WatcherDriver: the state and steps of one accountWatcherWorkflow run, as `FleetDriver` is for a
 * fleet. It holds the orphans and unknown names seen, the recent sweeps and the `state` query's
 * snapshot; the ledger lives in its pages (src/core/ledger-pages.ts), and the driver keeps only
 * entries from before them until its next look hands them over. `cycle` takes one look's digest
 * and evidence (`look`), runs the pure `planCycle` (src/core/watcher.ts), tells lost VMs
 * (`tellLost`) and deletes due orphans (`sweep`). Messages only change fields and cancel the long poll.
 *
 * Determinism: the order of commands follows from the order of the awaits below (look, the
 * signals one after another, the deletions side by side, the pause); changing it, or adding an
 * `await`, changes the commands a watcher issues.
 */
import { CancellationScope, condition, getExternalWorkflowHandle, isCancellation, log, metricMeter, sleep, workflowInfo } from '@temporalio/workflow';
import { instanceLostSignal } from '../core/api';
import { lossMessage } from '../core/loss';
import { METRICS } from '../core/metrics';
import { planCycle, withWatcherTuning, type CyclePlan, type OrphanSeen, type WatcherCarried, type WatcherInput } from '../core/watcher';
import type { CreateRecord, SweepRecord, SweepRequest, WatcherState, WatcherTuning } from '../core/watcher-api';
import { expiringOf, keepLedger, recordCreates, recordedKeys, recordedNames, spotNamesOf, type LedgerEntry } from '../core/watcher-ledger';
import type { WatchView } from '../activities/watcher';
import type { NameEvidence } from '../core/ledger-pages';
import { failureMessage } from './failure-info';
import { sweeping, watchingLong } from './proxies';

/** Budget of one orphan deletion (delete, wait until gone, clean up). */
const SWEEP_DEADLINE_MS = 2 * 60_000;

/** A record wakes the watcher (cancels its long poll) at most this often: a burst of creates costs one look, not one each. */
const RECORD_WAKE_MS = 2_000;

/** Spot create names a run remembers for their wake-up (the pages hold the rest). */
const SPOT_KEPT = 1_000;

const iso = (ms: number): string => new Date(ms).toISOString();

/** The create keys on record per name: this run's own entries and the pages' evidence for the look's unowned names. */
function keysOf(ledger: readonly LedgerEntry[], evidence: readonly NameEvidence[] | undefined): Map<string, Set<string>> {
  const keys = recordedKeys(ledger);
  for (const e of evidence ?? []) if (e.createKeys?.length) keys.set(e.vmName, new Set([...(keys.get(e.vmName) ?? []), ...e.createKeys]));
  return keys;
}

/** An unowned name as the `state` query shows it. */
function shown(o: OrphanSeen): { vmName: string; instanceIds: string[]; sideResources?: string[]; firstSeenAt: string } {
  return { vmName: o.vmName, instanceIds: o.instanceIds, ...(o.sideResources ? { sideResources: o.sideResources } : {}), firstSeenAt: iso(o.firstSeenAtMs) };
}

export class WatcherDriver {
  private tuning: Partial<WatcherTuning> | undefined;
  private t: WatcherTuning;
  private readonly at: { cloud: string; region: string };
  private readonly where: string;
  private orphans: OrphanSeen[];
  private unknown: OrphanSeen[];
  private ledger: LedgerEntry[];
  private sweeps: SweepRecord[];
  /** The `state` query's answer (updated in place after every cycle). */
  readonly state: WatcherState;
  private nudges = 0;
  private nudgesSeen = 0;
  private sweepAsked = 0;
  private sweepDone = 0;
  private includeUnknown: string[] = [];
  private wokenAtMs = -Infinity;
  /** Spot names whose Ready record woke this run: each wakes it once, past RECORD_WAKE_MS (its notice may be short). */
  private readonly spotWoken = new Set<string>();
  /** Spot creates recorded in the ledger pages since this run began (the latest {@link SPOT_KEPT}): their Ready record wakes at once. */
  private spotCreated: string[] = [];
  /** The create keys on record per name at the last look (the pages' evidence and this run's own entries): the sweep releases with them. */
  private keys = new Map<string, Set<string>>();
  /** The last cycle's deletions (what a `sweepNow` answers). */
  private lastSwept: SweepRecord[] = [];
  /** The long-polling cycle in flight: a nudge or a sweep request cancels it to look at once. */
  private polling: CancellationScope | undefined;
  private lastSignature: string | undefined;
  /** Names the ledger pages held at the last look. */
  private pagedSize: number | undefined;

  constructor(private readonly input: WatcherInput) {
    this.tuning = input.tuning;
    this.t = withWatcherTuning(this.tuning);
    this.at = { cloud: input.cloud, region: input.region };
    this.where = `${input.cloud}/${input.region}`;
    const c = input.carried;
    this.orphans = c?.orphans ?? [];
    this.unknown = c?.unknown ?? [];
    this.ledger = c?.ledger ?? [];
    this.sweeps = c?.sweeps ?? [];
    this.state = {
      deployment: input.deployment,
      ...this.at,
      cycles: c?.cycles ?? 0,
      looks: c?.looks ?? 0,
      beats: c?.beats ?? 0,
      fast: false,
      instances: 0,
      owners: 0,
      orphans: [],
      sweeps: this.sweeps,
    };
  }

  // ---- messages ----

  /** The `nudge` signal: adopt the sender's tuning and look at once. */
  onNudge(latest: Partial<WatcherTuning> | undefined): void {
    this.adopt(latest);
    this.wake();
  }

  /**
   * The `record` signal: a launch is about to create these names here, or a VM is Ready. From
   * senders before the ledger pages (no `paged`), the names are this run's to keep and hand over.
   */
  onRecord(rec: CreateRecord): void {
    this.adopt(rec.tuning);
    if (rec.paged) this.spotCreated = [...this.spotCreated.filter((n) => !rec.spotNames?.includes(n)), ...(rec.spotNames ?? [])].slice(-SPOT_KEPT);
    else {
      this.ledger = recordCreates(this.ledger, rec.vmNames, Date.now(), rec.createKeys, rec.spotNames);
      this.state.ledger = this.ledger.length;
    }
    if (!rec.wake) return;
    const spot = new Set([...spotNamesOf(this.ledger), ...this.spotCreated]);
    const newSpot = rec.vmNames.filter((n) => spot.has(n) && !this.spotWoken.has(n));
    for (const n of newSpot) this.spotWoken.add(n);
    if (newSpot.length > 0 || Date.now() - this.wokenAtMs >= RECORD_WAKE_MS) this.wake();
  }

  /** The `sweepNow` Update: look at once with every orphan due (and the named unknown ones); answers that cycle's deletions. */
  async sweepNow(req?: SweepRequest): Promise<SweepRecord[]> {
    this.includeUnknown = [...new Set([...this.includeUnknown, ...(req?.includeUnknown ?? [])])];
    const ticket = ++this.sweepAsked;
    this.polling?.cancel();
    await condition(() => this.sweepDone >= ticket);
    return this.lastSwept;
  }

  // ---- the loop ----

  /** One cycle: a view, then its decisions carried out. False: the look failed or was cancelled (look again). */
  async cycle(): Promise<boolean> {
    const asked = this.sweepAsked;
    const expiring = expiringOf(this.ledger, Date.now(), this.t);
    const handover = this.ledger;
    const view = await this.look(asked > this.sweepDone, expiring, handover);
    if (!view) return false;
    this.lastSignature = view.signature;
    const now = Date.now();
    const sweepNow = asked > this.sweepDone;
    const named = sweepNow ? this.includeUnknown : [];
    const { digest } = view;
    const handed = view.handedOver !== undefined ? new Set(handover) : undefined;
    this.keys = keysOf(this.ledger, view.evidence);
    const plan = planCycle(digest, [...this.orphans, ...this.unknown], now, this.t, {
      recorded: new Set([...recordedNames(this.ledger), ...(view.evidence ?? []).map((e) => e.vmName)]),
      createKeys: this.keys,
      sweepNow,
      includeUnknown: named,
    });
    const seen = new Set([...digest.present, ...digest.unowned.map((u) => u.vmName)]);
    this.ledger = keepLedger(handed ? this.ledger.filter((e) => !handed.has(e)) : this.ledger, seen, new Set(expiring), now, this.t);
    this.pagedSize = view.ledger;
    this.unknown = plan.unknown;
    await this.tellLost(plan.lost);
    const swept = await this.sweep(plan.due, named, sweepNow);
    this.orphans = plan.due.length === 0 ? plan.orphans : plan.orphans.filter((o) => !swept.some((s) => s.ok && s.vmName === o.vmName));
    this.sweeps = [...this.sweeps, ...swept].slice(-this.t.keepSweeps);
    this.lastSwept = swept;
    if (sweepNow) this.includeUnknown = [];
    this.sweepDone = asked;
    this.record(view, plan, now);
    return true;
  }

  /**
   * The history is long (or the server says so). Hazard: a sweepNow asked during this cycle waits
   * for the next one, in this run: never continue as new while one is pending (its handler would
   * block allHandlersFinished forever).
   */
  shouldContinueAsNew(): boolean {
    const info = workflowInfo();
    return (info.continueAsNewSuggested || info.historyLength > this.t.continueAsNewAfterEvents) && this.sweepAsked === this.sweepDone;
  }

  /** The input of the next run (continue-as-new). */
  nextInput(): WatcherInput {
    return { ...this.input, ...(this.tuning ? { tuning: this.tuning } : {}), carried: this.carried() };
  }

  /** A deletion that failed is tried again after a fast interval, not at once. */
  async paceAfterFailures(): Promise<void> {
    if (this.lastSwept.some((r) => !r.ok)) await sleep(this.t.fastIntervalMs);
  }

  // ---- steps ----

  private carried(): WatcherCarried {
    const s = this.state;
    return { orphans: this.orphans, unknown: this.unknown, ledger: this.ledger, sweeps: this.sweeps, cycles: s.cycles, looks: s.looks, beats: s.beats ?? 0 };
  }

  private adopt(latest: Partial<WatcherTuning> | undefined): void {
    if (!latest || Object.keys(latest).length === 0) return;
    this.tuning = { ...this.tuning, ...latest };
    this.t = withWatcherTuning(this.tuning);
  }

  private wake(): void {
    this.wokenAtMs = Date.now();
    this.nudges += 1;
    this.polling?.cancel();
  }

  /** After a nudge or with a sweep asked: one look, at once; else long-poll from the last view. Undefined: failed (after a pause) or cancelled. */
  private async look(sweepAsked: boolean, expiring: string[], handover: LedgerEntry[]): Promise<WatchView | undefined> {
    const quick = sweepAsked || this.nudges !== this.nudgesSeen;
    const spot = [...new Set([...spotNamesOf(this.ledger), ...this.spotCreated])];
    this.nudgesSeen = this.nudges;
    const scope = new CancellationScope();
    this.polling = scope;
    try {
      return await scope.run(() =>
        watchingLong(`inventory of ${this.where}`, this.t.quietWindowMs, this.t.heartbeatTimeoutMs, this.input.cloud).watchCycle({
          at: this.at,
          taskQueue: workflowInfo().taskQueue,
          known: this.orphans,
          ...(expiring.length > 0 ? { expiring } : {}),
          ...(spot.length > 0 ? { spot } : {}),
          ...(handover.length > 0 ? { handover } : {}),
          tuning: this.t,
          ...(quick || this.lastSignature === undefined ? {} : { lastSignature: this.lastSignature }),
        }),
      );
    } catch (err) {
      if (!isCancellation(err)) {
        log.warn('watch cycle failed; looking again after a fast interval', { ...this.at, error: failureMessage(err) });
        await sleep(this.t.fastIntervalMs);
      }
      return undefined;
    } finally {
      this.polling = undefined;
    }
  }

  /** Tell each lost VM, one after another; a VM whose workflow closed since the view has nobody to tell. */
  private async tellLost(lost: CyclePlan['lost']): Promise<void> {
    for (const l of lost) {
      const reason = lossMessage(l.cause);
      log.warn('instance lost: telling its VM', { vmName: l.vmName, workflowId: l.workflowId, reason });
      try {
        await getExternalWorkflowHandle(l.workflowId).signal(instanceLostSignal, { instanceIds: l.instanceIds, cause: l.cause, reason });
      } catch {
        // The VM's workflow closed since the view was taken: nobody to tell.
      }
    }
  }

  /** Orphans due together are deleted side by side (a cloud's delete-and-wait takes minutes). */
  private async sweep(due: readonly OrphanSeen[], named: readonly string[], sweepNow: boolean): Promise<SweepRecord[]> {
    return Promise.all(due.map((o) => this.sweepOne(o, named.includes(o.vmName) ? 'operator' : sweepNow ? 'now' : 'grace')));
  }

  private async sweepOne(o: OrphanSeen, by: SweepRecord['by']): Promise<SweepRecord> {
    const rec: SweepRecord = { ...shown(o), sweptAt: '', by, ok: true };
    const keys = [...(this.keys.get(o.vmName) ?? [])];
    try {
      await sweeping(
        `delete orphan ${o.vmName} (${[...o.instanceIds, ...(o.sideResources ?? [])].join(', ')}) in ${this.where}`,
        SWEEP_DEADLINE_MS,
        this.input.cloud,
      ).releaseAt({
        at: this.at,
        vmName: o.vmName,
        instanceIds: o.instanceIds,
        mode: 'full',
        pollIntervalMs: 1_000,
        ...(keys?.length ? { createKeys: keys } : {}),
        deadlineAtMs: Date.now() + SWEEP_DEADLINE_MS,
      });
      metricMeter
        .createCounter(METRICS.orphansSwept, '1', 'orphaned instances deleted by the account watcher')
        .add(o.instanceIds.length, { cloud: this.at.cloud });
      log.info('orphan deleted', { vmName: o.vmName, instanceIds: o.instanceIds });
    } catch (err) {
      rec.ok = false;
      rec.error = failureMessage(err);
      log.warn('orphan deletion failed; retrying next cycle', { vmName: o.vmName, error: rec.error });
    }
    rec.sweptAt = iso(Date.now());
    return rec;
  }

  /** The `state` query's snapshot after a cycle. */
  private record(view: WatchView, plan: CyclePlan, now: number): void {
    const s = this.state;
    Object.assign(s, {
      cycles: s.cycles + 1,
      looks: s.looks + view.looks,
      beats: (s.beats ?? 0) + (view.beats ?? 0),
      lastCycleAt: iso(now),
      nextCycleAt: iso(Date.now() + plan.nextCycleInMs),
      fast: plan.fast,
      cadence: plan.cadence,
      instances: view.digest.instances,
      owners: view.digest.owners,
      orphans: this.orphans.map((o) => ({ ...shown(o), deleteAfter: iso(o.firstSeenAtMs + this.t.orphanGraceMs) })),
      unknown: this.unknown.map(shown),
      ledger: this.ledger.length + (this.pagedSize ?? 0),
      sweeps: this.sweeps,
    });
  }
}
