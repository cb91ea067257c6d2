/**
 * The account watcher's decisions, pure (no Temporal import): one cycle compares what the cloud
 * lists in one account and region (`inventory`) with the open vmWorkflows there (visibility) and
 * says whom to tell that their instance is lost, which instances are orphans (recorded, unowned),
 * which are unknown (tagged, never recorded), which orphans are due for deletion, and when to look again.
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
 * | some, all Ready (or only VMs open elsewhere)  | `ready` | 20 s    |
 * | none                                          | `slow`  | 5 min   |
 *
 * never later than the next orphan falls due (and a failed deletion is retried at `fast`).
 */
import type { Stage } from './api';
import type { SweepRecord, WatcherTuning } from './watcher-api';
import { lossCauseOf, type LossCause } from './loss';
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
  /** The creates on record (absent in runs from before the ledger). */
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
const UP_STAGES: ReadonlySet<Stage> = new Set<Stage>(['ready', 'k8s-failed']);

/** Statuses that count as alive (the same rule as the per-VM health check). */
const ALIVE: ReadonlySet<InstanceStatus> = new Set<InstanceStatus>(['Running', 'Pending']);

export type Cadence = 'fast' | 'ready' | 'slow';

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

/** The cadence for these owners: `fast` while one placed here launches, `ready` while any is open, else `slow`. */
export function cadenceOf(owners: readonly OwnerVm[]): Cadence {
  if (owners.some((o) => !o.elsewhere && MOVING_STAGES.has(o.stage))) return 'fast';
  return owners.length > 0 ? 'ready' : 'slow';
}

/** The wait between looks at a cadence. */
export function intervalOf(cadence: Cadence, t: WatcherTuning): number {
  return cadence === 'fast' ? t.fastIntervalMs : cadence === 'ready' ? t.readyIntervalMs : t.slowIntervalMs;
}

export type CycleRow =
  | { row: 'orphan'; vmName: string; instanceIds: string[]; sideResources?: string[]; firstSeenAtMs: number; due: boolean }
  | { row: 'unknown'; vmName: string; instanceIds: string[]; sideResources?: string[]; firstSeenAtMs: number }
  | { row: 'owned'; vmName: string; instanceIds: string[] }
  | { row: 'lost'; vmName: string; workflowId: string; instanceIds: string[]; cause: LossCause }
  | { row: 'settling'; vmName: string; workflowId: string };

export interface CyclePlan {
  rows: CycleRow[];
  /** The orphan map to carry to the next cycle (due ones stay until their deletion succeeds). */
  orphans: OrphanSeen[];
  /** Tagged, never recorded: carried for their first-seen times, never due by themselves. */
  unknown: OrphanSeen[];
  /** Orphans to delete now (grace over, or `sweepNow`). */
  due: OrphanSeen[];
  /** VMs to tell that their instance is gone or failed. */
  lost: { workflowId: string; vmName: string; instanceIds: string[]; cause: LossCause }[];
  /** Which cadence applies (the table in this file's header). */
  cadence: Cadence;
  /** Whether the `fast` or `ready` cadence applies (some VM of the account is open). */
  fast: boolean;
  /** Wait before the next cycle. */
  nextCycleInMs: number;
}

function groupByName(instances: readonly Owned[]): Map<string, Owned[]> {
  const out = new Map<string, Owned[]>();
  for (const i of instances) out.set(i.vmName, [...(out.get(i.vmName) ?? []), i]);
  return out;
}

/** What one look saw: this deployment's instances and side resources here, and the open VMs that own names. */
export interface CycleView {
  instances: readonly Owned[];
  owners: readonly OwnerVm[];
  /** Absent: the adapter does not list side resources. */
  sides?: readonly SideResource[];
}

function sidesByName(sides: readonly SideResource[] | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of sides ?? []) out.set(r.vmName, [...(out.get(r.vmName) ?? []), `${r.kind}:${r.id}`]);
  for (const v of out.values()) v.sort();
  return out;
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
function foreignIds(seen: readonly Owned[], keys: ReadonlySet<string> | undefined): string[] {
  if (!keys || keys.size === 0) return [];
  return seen
    .filter((o) => o.createKey !== undefined && !keys.has(o.createKey))
    .map((o) => o.id)
    .sort();
}

/** One cycle's decisions; `known` are the unowned names seen before (orphans and unknown), for their first-seen times. */
export function planCycle(view: CycleView, known: readonly OrphanSeen[], nowMs: number, t: WatcherTuning, evidence: SweepEvidence): CyclePlan {
  const sweepNow = evidence.sweepNow === true;
  const named = new Set(evidence.includeUnknown ?? []);
  const byName = groupByName(view.instances);
  const sides = sidesByName(view.sides);
  const ownersByName = new Map<string, OwnerVm[]>();
  for (const o of view.owners) ownersByName.set(o.vmName, [...(ownersByName.get(o.vmName) ?? []), o]);
  const rows: CycleRow[] = [];
  const orphans: OrphanSeen[] = [];
  const unknown: OrphanSeen[] = [];
  const lost: CyclePlan['lost'] = [];
  const names = [...new Set([...byName.keys(), ...sides.keys()])];
  for (const vmName of names) {
    const all = byName.get(vmName) ?? [];
    const ids = all.map((o) => o.id).sort();
    if (ownersByName.has(vmName)) {
      if (ids.length > 0) rows.push({ row: 'owned', vmName, instanceIds: ids });
      continue;
    }
    const before = known.find((k) => k.vmName === vmName);
    const foreign = evidence.recorded.has(vmName) && !named.has(vmName) ? foreignIds(all, evidence.createKeys?.get(vmName)) : [];
    if (foreign.length > 0) {
      const u: OrphanSeen = { vmName, instanceIds: foreign, firstSeenAtMs: before?.firstSeenAtMs ?? nowMs };
      unknown.push(u);
      rows.push({ row: 'unknown', ...u });
      if (foreign.length === ids.length && !sides.has(vmName)) continue;
    }
    const side = sides.get(vmName);
    const mine = ids.filter((id) => !foreign.includes(id));
    const o: OrphanSeen = { vmName, instanceIds: mine, ...(side ? { sideResources: side } : {}), firstSeenAtMs: before?.firstSeenAtMs ?? nowMs };
    if (!evidence.recorded.has(vmName) && !named.has(vmName)) {
      unknown.push(o);
      rows.push({ row: 'unknown', ...o });
      continue;
    }
    orphans.push(o);
    rows.push({ row: 'orphan', ...o, due: sweepNow || named.has(vmName) || nowMs - o.firstSeenAtMs >= t.orphanGraceMs });
  }
  for (const [vmName, owners] of ownersByName) {
    const seen = byName.get(vmName) ?? [];
    if (seen.some((o) => ALIVE.has(o.status))) continue;
    for (const owner of owners) {
      if (owner.elsewhere) continue;
      if (!UP_STAGES.has(owner.stage)) {
        rows.push({ row: 'settling', vmName, workflowId: owner.workflowId });
        continue;
      }
      const l = { vmName, workflowId: owner.workflowId, instanceIds: seen.map((o) => o.id), cause: lossCauseOf(seen) };
      lost.push(l);
      rows.push({ row: 'lost', ...l });
    }
  }
  const due = rows.flatMap((r) => (r.row === 'orphan' && r.due ? [orphans.find((o) => o.vmName === r.vmName)!] : []));
  const cadence = cadenceOf(view.owners);
  let next = intervalOf(cadence, t);
  for (const o of orphans) {
    if (due.includes(o)) continue;
    next = Math.min(next, Math.max(t.fastIntervalMs, o.firstSeenAtMs + t.orphanGraceMs - nowMs));
  }
  // A failed deletion is retried at the fast cadence, not after a slow wait.
  if (due.length > 0) next = Math.min(next, t.fastIntervalMs);
  return { rows, orphans, unknown, due, lost, cadence, fast: cadence !== 'slow', nextCycleInMs: next };
}

/**
 * What a cycle's view looks like, for "did anything change": owners with their stages and
 * instances with their statuses, sorted. A long-polling cycle returns as soon as this differs.
 */
export function viewSignature(view: CycleView): string {
  const owners = view.owners.map((o) => `${o.workflowId}=${o.stage}`).sort();
  const instances = view.instances.map((i) => `${i.vmName}/${i.id}=${i.status}`).sort();
  if (!view.sides?.length) return JSON.stringify([owners, instances]);
  return JSON.stringify([owners, instances, view.sides.map((r) => `${r.vmName}/${r.kind}:${r.id}`).sort()]);
}

/**
 * Whether a look inside a long-polling cycle must be handed to the workflow now: the view changed
 * (a loss shows as a change: the instance vanished or failed), or an orphan is due. A loss is not
 * a reason by itself: the workflow told the VM when the change came in, and telling it again
 * every look would only repeat the signal while visibility still shows it Ready.
 */
export function cycleMustReturn(plan: CyclePlan, signature: string, lastSignature: string | undefined): boolean {
  return plan.due.length > 0 || signature !== lastSignature;
}
