/**
 * The account watcher's messages (`accountWatcherWorkflow`, ID
 * `gpuprov-watch:<deployment>:<cloud>:<region>`): its tuning, the signals that feed it, its state
 * query and the sweep update. Both the client and the workflows import this module; it holds no
 * logic (the decisions are in src/core/watcher.ts).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** Timings of the watcher. Tests shrink them. */
export interface WatcherTuning {
  /** Between looks while a VM of the account is launching (not yet Ready). */
  fastIntervalMs: number;
  /** Between looks while VMs of the account are open and all Ready: the loss-detection delay. */
  readyIntervalMs: number;
  /** Between looks when none are. */
  slowIntervalMs: number;
  /**
   * Between looks while a Ready VM here runs on spot (its create was recorded as spot): a
   * preemption notice is acted on within this (the clouds give 30 s to 2 min).
   */
  spotIntervalMs: number;
  /** An unowned instance is deleted this long after it was first seen (GPUPROV_ORPHAN_GRACE). */
  orphanGraceMs: number;
  /** Deletions kept in the watcher's state (queryable, carried across continue-as-new). */
  keepSweeps: number;
  /** Continue-as-new once the history has this many events. */
  continueAsNewAfterEvents: number;
  /**
   * Longest one `watchCycle` activity keeps looking by itself while nothing changes: the watcher
   * spends one activity (not one activity and one timer per look) per window when idle.
   */
  quietWindowMs: number;
  /**
   * Heartbeat timeout of the long-polling cycle: a watcher whose worker died is retried this
   * long after its last heartbeat. The cycle heartbeats about every half of it, not every look
   * (each heartbeat that reaches the server is a billed action on Temporal Cloud).
   */
  heartbeatTimeoutMs: number;
  /**
   * A ledger entry (a create this deployment recorded) is forgotten once its VM name has had no
   * instance, side resource or open workflow for this long. Longer than the quiet window, so a
   * listed name is seen again before it could be forgotten.
   */
  ledgerKeepMs: number;
}

/** One orphan deletion (or a failed try) by the watcher. */
export interface SweepRecord {
  vmName: string;
  instanceIds: string[];
  /** Side resources (`kind:id`) swept with it, when the cloud lists them. */
  sideResources?: string[];
  firstSeenAt: string;
  sweptAt: string;
  /** `grace`: the grace period ran out; `now`: `provision sweep` asked; `operator`: `sweep --include-unknown` named it. */
  by: 'grace' | 'now' | 'operator';
  ok: boolean;
  error?: string;
}

/** An instance this deployment recorded creating, with no open workflow, waiting out its grace. */
export interface OrphanView {
  vmName: string;
  /** Empty when the VM name left only side resources (`sideResources`). */
  instanceIds: string[];
  sideResources?: string[];
  firstSeenAt: string;
  deleteAfter: string;
}

/**
 * An instance (or side resource) carrying this deployment's tag that the deployment has no record
 * of creating: made by another install with the same id, by hand, or before the ledger existed.
 * Never deleted unless the operator names it (`provision sweep --include-unknown NAME`).
 */
export interface UnknownView {
  vmName: string;
  instanceIds: string[];
  sideResources?: string[];
  firstSeenAt: string;
}

/** The `watcherState` query. */
export interface WatcherState {
  deployment: string;
  cloud: string;
  region: string;
  cycles: number;
  /** Inventory calls made (a long-polling cycle looks several times). */
  looks: number;
  /** Heartbeats the long-polling cycles sent (absent from watchers started before it was counted). */
  beats?: number;
  lastCycleAt?: string;
  nextCycleAt?: string;
  fast: boolean;
  /** `fast` (a VM launching), `spot` (a Ready spot VM), `ready` (VMs only Ready) or `slow` (none): src/core/watcher.ts. */
  cadence?: 'fast' | 'spot' | 'ready' | 'slow';
  instances: number;
  owners: number;
  orphans: OrphanView[];
  /** Tagged with this deployment, never recorded by it: shown, never swept by itself. */
  unknown?: UnknownView[];
  /** VM names whose creates the ledger holds. */
  ledger?: number;
  /** Recent deletions, newest last. */
  sweeps: SweepRecord[];
}

/**
 * Wake the watcher now (a VM of its account was created or became ready). Carries the settings
 * the nudging worker was given (GPUPROV_ORPHAN_GRACE), if any: the watcher adopts them over its
 * own, so a changed setting takes effect with the first launch after the workers restart.
 */
export const watcherNudgeSignal = defineSignal<[Partial<WatcherTuning>?]>('watcherNudge');

/** What a create (before it makes anything) or a VM at Ready tells its watcher: the ledger's evidence. */
export interface CreateRecord {
  /** The VM names about to be created (or Ready) in the watcher's cloud and region. */
  vmNames: string[];
  /** The create keys (`createKeyOf` of the idempotency keys) of those creates (absent from older senders and from Ready VMs). */
  createKeys?: { vmName: string; createKey: string }[];
  /** Of the names with a create key here, those whose create is on the spot market (the `spot` cadence). */
  spotNames?: string[];
  /** Look at once (a Ready VM's record, or a wake-up alone); a create's record leaves the watcher's cadence alone: nothing is there to see yet. */
  wake?: boolean;
  /**
   * The names are recorded in their ledger pages (src/core/ledger-pages.ts): the watcher keeps
   * none of them (absent from senders before the pages, whose names the watcher keeps and hands over).
   */
  paged?: true;
  /** The sender's watcher settings, as {@link watcherNudgeSignal} carries them. */
  tuning?: Partial<WatcherTuning>;
}

/**
 * Record creates in the watcher's ledger (and, with `wake`, wake it, at most once per two seconds
 * of workflow time): an instance is swept only if this deployment recorded creating its VM name here.
 */
export const watcherRecordSignal = defineSignal<[CreateRecord]>('watcherRecord');

/** The watcher's orphans, unknown instances, recent sweeps and cadence. */
export const watcherStateQuery = defineQuery<WatcherState>('watcherState');

/** What `provision sweep` asks: every orphan now, and the unknown VM names the operator named. */
export interface SweepRequest {
  includeUnknown?: string[];
}

/** Delete every current orphan now, ignoring the grace (and the named unknown ones); returns what the cycle deleted. */
export const sweepNowUpdate = defineUpdate<SweepRecord[], [SweepRequest]>('sweepNow');
