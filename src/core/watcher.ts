/**
 * The account watcher's decisions, pure (no Temporal import): one cycle compares what the cloud
 * lists in one account and region (`inventory`) with the open vmWorkflows there (visibility) and
 * says whom to tell that their instance is lost, which instances are orphans (recorded, unowned),
 * which are unknown (tagged, never recorded), which orphans are due for deletion, and when to look again.
 * The comparison runs where the look is taken (`digestOf`, src/core/watcher-digest.ts: the rows
 * `owned`, `lost` and `settling`); the workflow decides on the digest (`planCycle`: the rest), so
 * only unowned names, losses and counts pass through its history.
 *
 * | cloud lists for a VM name   | open vmWorkflow of that name | in the ledger (src/core/watcher-ledger.ts) | row        | action                                      |
 * |-----------------------------|------------------------------|--------------------------------------------|------------|---------------------------------------------|
 * | any instance or side        | none                         | yes                                        | `orphan`   | remember first seen; delete after grace     |
 * | any instance or side        | none                         | no, and the operator named it              | `orphan`   | delete now (`sweep --include-unknown NAME`) |
 * | any instance or side        | none                         | no                                         | `unknown`  | remember first seen; show; never delete     |
 * | an instance with another create key | none                 | yes, with other create keys                | `unknown`  | as above (a same-id install's, same name)   |
 * | any instance                | some                         | any                                        | `owned`    | forget any orphan entry                     |
 * | nothing Running/Pending     | one in `ready`/`k8s-failed`  | any                                        | `lost`     | signal that VM (`instanceLost`, src/core/loss.ts) |
 * | nothing Running/Pending     | one launching, tearing down  | any                                        | `settling` | nothing: its own workflow handles it        |
 *
 * The sweep acts on positive evidence only: a VM name the deployment recorded creating here
 * (before anything was made) and that no open workflow owns. A tag alone proves nothing: another
 * install may carry the same deployment id, or the instance may predate the ledger.
 *
 * Cadence, three levels (P7 in BENCHMARKS.md: an idle Ready VM must cost little):
 *
 * | open vmWorkflows placed here                  | cadence | default |
 * |-----------------------------------------------|---------|---------|
 * | at least one launching or tearing down        | `fast`  | 5 s     |
 * | a Ready one whose create was recorded as spot | `spot`  | 4 s     |
 * | some, all Ready (or only VMs open elsewhere)  | `ready` | 20 s    |
 * | none                                          | `slow`  | 5 min   |
 *
 * never later than the next orphan falls due (and a failed deletion is retried at `fast`).
 */
import type { Stage } from './api';
import type { SweepRecord, WatcherTuning } from './watcher-api';
import type { LossCause } from './loss';
import type { InstanceStatus, Owned, SideResource } from './provider';
import type { LedgerEntry } from './watcher-ledger';

/** An open vmWorkflow placed in the watched cloud and region (from its search attributes). */
export interface OwnerVm {
  workflowId: string;
  vmName: string;
  stage: Stage;
  /**
   * Open, but placed in another region or cloud, or run on another task queue of the namespace
   * (a hedged or compensating attempt here, another worker pool): it owns instances of its name
   * here, so they are never orphans, and it is never called lost from here.
   */
  elsewhere?: boolean;
}

/** An instance group (one VM name) with no open workflow, remembered across cycles. */
export interface OrphanSeen {
  vmName: string;
  /** Empty for a VM name that left only side resources. */
  instanceIds: string[];
  /** Its side resources (`kind:id`), when the adapter lists them (`sideInventory`). */
  sideResources?: string[];
  /** Epoch ms of the first cycle that saw it unowned. */
  firstSeenAtMs: number;
}

export const DEFAULT_WATCHER_TUNING: WatcherTuning = {
  fastIntervalMs: 5_000,
  readyIntervalMs: 20_000,
  slowIntervalMs: 5 * 60_000,
  spotIntervalMs: 4_000,
  orphanGraceMs: 10 * 60_000,
  keepSweeps: 50,
  continueAsNewAfterEvents: 2_000,
  quietWindowMs: 10 * 60_000,
  heartbeatTimeoutMs: 3 * 60_000,
  ledgerKeepMs: 60 * 60_000,
};

/** How often the long-polling cycle heartbeats: half its heartbeat timeout. */
export function heartbeatEveryMs(t: WatcherTuning): number {
  return Math.max(1, Math.floor(t.heartbeatTimeoutMs / 2));
}

export function withWatcherTuning(t?: Partial<WatcherTuning>): WatcherTuning {
  return { ...DEFAULT_WATCHER_TUNING, ...t };
}

/** What a watcher carries across continue-as-new. */
export interface WatcherCarried {
  orphans: OrphanSeen[];
  /** Tagged instances never recorded (absent in runs from before the ledger). */
  unknown?: OrphanSeen[];
  /**
   * Creates on record that the run kept itself: the whole ledger in runs from before the ledger
   * pages; since them, only what the next look hands over to its pages (empty once it has).
   */
  ledger?: LedgerEntry[];
  sweeps: SweepRecord[];
  cycles: number;
  /** Absent in runs from before it was counted. */
  looks?: number;
  /** Heartbeats of the long-polling cycles (absent in runs from before it was counted). */
  beats?: number;
}

/** Input of `accountWatcherWorkflow` (what `ensureWatcher`'s signal-with-start sends). */
export interface WatcherInput {
  deployment: string;
  cloud: string;
  region: string;
  tuning?: Partial<WatcherTuning>;
  /** Set only by continue-as-new. */
  carried?: WatcherCarried;
}

/** `gpuprov-watch:<deployment>:<cloud>:<region>`: one watcher per deployment, account (cloud) and region. */
export const watcherWorkflowId = (deployment: string, cloud: string, region: string): string => `gpuprov-watch:${deployment}:${cloud}:${region}`;

/** Stages in which a VM is handed over and an instance must be up. */
export const UP_STAGES: ReadonlySet<Stage> = new Set<Stage>(['ready', 'k8s-failed']);

/** Statuses that count as alive (the same rule as the per-VM health check). */
export const ALIVE: ReadonlySet<InstanceStatus> = new Set<InstanceStatus>(['Running', 'Pending']);

export type Cadence = 'fast' | 'spot' | 'ready' | 'slow';

/**
 * Stages in which a VM's instance comes or goes soon (the `fast` cadence). Not here: Ready ones,
 * and long waits whose own workflow drives them (`waiting-retry`, a `leaked` teardown's backoff).
 */
const MOVING_STAGES: ReadonlySet<Stage> = new Set<Stage>([
  'pending',
  'planning',
  'preparing',
  'creating',
  'booting',
  'connecting',
  'compensating',
  'k8s',
  'tearing-down',
  'lost',
]);

/**
 * The cadence for these owners: `fast` while one placed here launches, `spot` while one placed
 * here is Ready on spot (`spot`: the names the ledger recorded as spot creates), `ready` while any
 * is open, else `slow`.
 */
export function cadenceOf(owners: readonly OwnerVm[], spot?: ReadonlySet<string>): Cadence {
  if (owners.some((o) => !o.elsewhere && MOVING_STAGES.has(o.stage))) return 'fast';
  if (spot?.size && owners.some((o) => !o.elsewhere && UP_STAGES.has(o.stage) && spot.has(o.vmName))) return 'spot';
  return owners.length > 0 ? 'ready' : 'slow';
}

/** The wait between looks at a cadence. */
export function intervalOf(cadence: Cadence, t: WatcherTuning): number {
  if (cadence === 'spot') return Math.min(t.spotIntervalMs, t.readyIntervalMs);
  return cadence === 'fast' ? t.fastIntervalMs : cadence === 'ready' ? t.readyIntervalMs : t.slowIntervalMs;
}

export type CycleRow =
  | { row: 'orphan'; vmName: string; instanceIds: string[]; sideResources?: string[]; firstSeenAtMs: number; due: boolean }
  | { row: 'unknown'; vmName: string; instanceIds: string[]; sideResources?: string[]; firstSeenAtMs: number }
  | { row: 'lost'; vmName: string; workflowId: string; instanceIds: string[]; cause: LossCause };

/** A VM placed here, told that none of its instances is alive. */
export interface LostVm {
  workflowId: string;
  vmName: string;
  instanceIds: string[];
  cause: LossCause;
}

export interface CyclePlan {
  /** The unowned names and the losses (owned names make no row: they need no decision). */
  rows: CycleRow[];
  /** The orphan map to carry to the next cycle (due ones stay until their deletion succeeds). */
  orphans: OrphanSeen[];
  /** Tagged, never recorded: carried for their first-seen times, never due by themselves. */
  unknown: OrphanSeen[];
  /** Orphans to delete now (grace over, or `sweepNow`). */
  due: OrphanSeen[];
  /** VMs to tell that their instance is gone or failed. */
  lost: LostVm[];
  /** Which cadence applies (the table in this file's header). */
  cadence: Cadence;
  /** Whether the `fast` or `ready` cadence applies (some VM of the account is open). */
  fast: boolean;
  /** Wait before the next cycle. */
  nextCycleInMs: number;
}

/** What one look saw: this deployment's instances and side resources here, and the open VMs that own names. */
export interface CycleView {
  instances: readonly Owned[];
  owners: readonly OwnerVm[];
  /** Absent: the adapter does not list side resources. */
  sides?: readonly SideResource[];
}

/** A VM name listed here (instances or side resources) that no open vmWorkflow owns. */
export interface UnownedName {
  vmName: string;
  /** Its instances, by id, with the create key where the cloud reports one. */
  instances: { id: string; createKey?: string }[];
  /** Its side resources (`kind:id`), when the adapter lists them. */
  sideResources?: string[];
}

/**
 * One look as the workflow sees it (`digestOf`, src/core/watcher-digest.ts): what needs a
 * decision and counts, never the whole view, so the watcher's history does not grow with the fleet.
 */
export interface ViewDigest {
  instances: number;
  owners: number;
  unowned: UnownedName[];
  lost: LostVm[];
  /** VMs placed here with no alive instance in a stage their own workflow drives (launching, tearing down). */
  settling: number;
  cadence: Cadence;
  /** Of the ledger names the workflow asked about (`expiring`), those this look listed or saw owned. */
  present: string[];
}

/** What the sweep may act on this cycle. */
export interface SweepEvidence {
  /** VM names this deployment recorded creating here (the ledger). */
  recorded: ReadonlySet<string>;
  /**
   * The create keys recorded per name (absent or empty for a name: none known). An instance of a
   * recorded name that carries another create key is another install's (same deployment id, same
   * name): unknown, never an orphan.
   */
  createKeys?: ReadonlyMap<string, ReadonlySet<string>>;
  /** `provision sweep`: every orphan is due now, ignoring the grace. */
  sweepNow?: boolean;
  /** Unknown VM names the operator named (`sweep --include-unknown`): due now as orphans. */
  includeUnknown?: readonly string[];
}

/** Ids of `seen` that carry a create key other than the recorded ones (none recorded: none foreign). */
function foreignIds(seen: UnownedName['instances'], keys: ReadonlySet<string> | undefined): string[] {
  if (!keys || keys.size === 0) return [];
  return seen
    .filter((o) => o.createKey !== undefined && !keys.has(o.createKey))
    .map((o) => o.id)
    .sort();
}

/** The unowned name's rows: unknown (never recorded, or another create key's instances) and/or orphan. */
function classify(u: UnownedName, before: OrphanSeen | undefined, nowMs: number, t: WatcherTuning, evidence: SweepEvidence, named: ReadonlySet<string>) {
  const { vmName } = u;
  const ids = u.instances.map((o) => o.id).sort();
  const firstSeenAtMs = before?.firstSeenAtMs ?? nowMs;
  const out: { orphan?: OrphanSeen & { due: boolean }; unknown: OrphanSeen[] } = { unknown: [] };
  const foreign = evidence.recorded.has(vmName) && !named.has(vmName) ? foreignIds(u.instances, evidence.createKeys?.get(vmName)) : [];
  if (foreign.length > 0) {
    out.unknown.push({ vmName, instanceIds: foreign, firstSeenAtMs });
    if (foreign.length === ids.length && !u.sideResources) return out;
  }
  const mine = ids.filter((id) => !foreign.includes(id));
  const o: OrphanSeen = { vmName, instanceIds: mine, ...(u.sideResources ? { sideResources: u.sideResources } : {}), firstSeenAtMs };
  if (!evidence.recorded.has(vmName) && !named.has(vmName)) out.unknown.push(o);
  else out.orphan = { ...o, due: evidence.sweepNow === true || named.has(vmName) || nowMs - firstSeenAtMs >= t.orphanGraceMs };
  return out;
}

/** The wait before the next look: the cadence's interval, never past the next orphan's grace (a failed deletion: `fast`). */
export function nextLookInMs(cadence: Cadence, orphans: readonly OrphanSeen[], due: number, nowMs: number, t: WatcherTuning): number {
  let next = intervalOf(cadence, t);
  for (const o of orphans) next = Math.min(next, Math.max(t.fastIntervalMs, o.firstSeenAtMs + t.orphanGraceMs - nowMs));
  return due > 0 ? Math.min(next, t.fastIntervalMs) : next;
}

/** One cycle's decisions from a look's digest; `known` are the unowned names seen before (orphans and unknown), for their first-seen times. */
export function planCycle(digest: ViewDigest, known: readonly OrphanSeen[], nowMs: number, t: WatcherTuning, evidence: SweepEvidence): CyclePlan {
  const named = new Set(evidence.includeUnknown ?? []);
  const rows: CycleRow[] = [];
  const orphans: OrphanSeen[] = [];
  const unknown: OrphanSeen[] = [];
  const due: OrphanSeen[] = [];
  for (const u of digest.unowned) {
    const c = classify(
      u,
      known.find((k) => k.vmName === u.vmName),
      nowMs,
      t,
      evidence,
      named,
    );
    for (const x of c.unknown) rows.push({ row: 'unknown', ...x });
    unknown.push(...c.unknown);
    if (!c.orphan) continue;
    const { due: isDue, ...o } = c.orphan;
    orphans.push(o);
    rows.push({ row: 'orphan', ...c.orphan });
    if (isDue) due.push(o);
  }
  for (const l of digest.lost) rows.push({ row: 'lost', ...l });
  const waiting = orphans.filter((o) => !due.includes(o));
  const nextCycleInMs = nextLookInMs(digest.cadence, waiting, due.length, nowMs, t);
  return { rows, orphans, unknown, due, lost: digest.lost, cadence: digest.cadence, fast: digest.cadence !== 'slow', nextCycleInMs };
}
