/**
 * The account watcher's activities: one cycle's view (the cloud's `inventory` plus the open
 * vmWorkflows placed in that cloud and region, from visibility), and `ensureWatcher`, the
 * signal-with-start a VM runs once it is Ready. Both talk to Temporal through the worker's client.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Stage } from '../core/api';
import type { WatcherTuning } from '../core/watcher-api';
import type { Owned, SideResource } from '../core/provider';
import { SA } from '../core/search-attributes';
import { heartbeatEveryMs, nextLookInMs, type CycleView, type OrphanSeen, type OwnerVm, type ViewDigest, withWatcherTuning } from '../core/watcher';
import { cycleMustReturn, digestOf, dueIn, presentIn, viewSignature } from '../core/watcher-digest';
import type { ProviderRegistry } from '../providers/registry';
import type { LedgerSummary, NameEvidence } from '../core/ledger-pages';
import type { LedgerEntry } from '../core/watcher-ledger';
import { activityLog } from './activity-log';
import { providerOf } from './attempt';
import { translated } from './failures';
import { recordOnce } from './watcher-signals';
import { clientLedgerPages, type LedgerPages } from './ledger-pages';

export interface WatcherDeps {
  registry: ProviderRegistry;
  /** The deployment id: part of every watcher's workflow ID. */
  owner: string;
  /** Watcher timings given to watchers this worker starts (GPUPROV_ORPHAN_GRACE sets the grace). */
  watcher?: Partial<WatcherTuning>;
  /** Default: the activity context's client. */
  client?: () => Client;
  /** The ledger pages; default: through the client. */
  ledger?: LedgerPages;
  /** Clock and the cancellable sleep between looks, for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** One account and region, and the task queue whose vmWorkflows count as owners. */
export interface WatchInput {
  at: { cloud: string; region: string };
  taskQueue: string;
  /** `ensureWatcher` of a Ready VM: its name, recorded in the watcher's ledger (absent in histories from before the ledger). */
  vmName?: string;
}

/** A cycle that keeps looking by itself (every planned interval) until the view changes or needs action. */
export interface WatchCycleInput extends WatchInput {
  /** The orphans the workflow knows (recorded names only: their first-seen times decide what is due). */
  known: OrphanSeen[];
  /** The ledger names the workflow asks about (`expiringOf`): the digest says which are still here. */
  expiring?: string[];
  /** The ledger names whose latest create was on spot (`spotNamesOf`): a Ready one here sets the `spot` cadence. */
  spot?: string[];
  /** Entries the watcher kept itself (carried from before the ledger pages, or recorded by older senders): handed to their pages first. */
  handover?: LedgerEntry[];
  tuning: WatcherTuning;
  /** The signature of the view the workflow last acted on; absent: return after one look. */
  lastSignature?: string;
}

/** A cycle's answer: the digest of its last look (never the whole view), its signature and its cost. */
export interface WatchView {
  digest: ViewDigest;
  /** A short hash of `viewSignature` of the last look. */
  signature: string;
  /** Looks (inventory calls) this cycle made. */
  looks: number;
  /** Heartbeats this cycle sent (each reaches the server: they are further apart than the worker's throttle). */
  beats?: number;
  /**
   * Of the digest's unowned names, those the ledger pages recorded, with their keys (the sweep's
   * evidence). Absent from cycles before the pages: the workflow decides on its own ledger then.
   */
  evidence?: NameEvidence[];
  /** Names the ledger pages hold (with `evidence`). */
  ledger?: number;
  /** The `handover` entries were accepted by their pages (with `evidence`). */
  handedOver?: number;
}

/** `viewSignature` hashed (22 base64url characters of a SHA-256): what the watcher's history keeps of a view. */
export const viewHash = (view: CycleView): string => createHash('sha256').update(viewSignature(view)).digest('base64url').slice(0, 22);

const quoted = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The visibility query of the open vmWorkflows placed at `at` on `taskQueue`. */
export function ownersQuery(input: WatchInput): string {
  return [
    `WorkflowType = 'vmWorkflow'`,
    `ExecutionStatus = 'Running'`,
    `TaskQueue = ${quoted(input.taskQueue)}`,
    `${SA.cloud.name} = ${quoted(input.at.cloud)}`,
    `${SA.region.name} = ${quoted(input.at.region)}`,
  ].join(' AND ');
}

const NAMES_PER_QUERY = 20;

/** The visibility query of the open vmWorkflows with one of these VM names, wherever they run. */
export function openByNameQuery(vmNames: readonly string[]): string {
  const names = vmNames.map((n) => `${SA.vmName.name} = ${quoted(n)}`).join(' OR ');
  return `WorkflowType = 'vmWorkflow' AND ExecutionStatus = 'Running' AND (${names})`;
}

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // unit tests call activities directly
  }
}

/** A heartbeat: liveness, and where a cancel (a nudge, a sweep request) is delivered. */
function beat(): void {
  activityContext()?.heartbeat();
}

/** The activity's cancellable sleep; a plain timer outside an activity. */
async function pause(ms: number): Promise<void> {
  const ctx = activityContext();
  if (ctx) await ctx.sleep(ms);
  else await new Promise((r) => setTimeout(r, ms));
}

/**
 * Heartbeats at most every `everyMs` (half the heartbeat timeout): the worker throttles only to
 * `maxHeartbeatThrottleInterval` (3 s here), so a beat per look would reach the server per look.
 */
function heartbeats(everyMs: number, now: () => number, sleep: (ms: number) => Promise<void>) {
  let last = -Infinity;
  let sent = 0;
  const ifDue = (): void => {
    if (now() - last < everyMs) return;
    beat();
    last = now();
    sent += 1;
  };
  return {
    ifDue,
    /** Wait `ms`, heartbeating when due on the way. */
    async pause(ms: number): Promise<void> {
      const until = now() + ms;
      for (let left = ms; left > 0; left = until - now()) {
        await sleep(Math.min(left, Math.max(1, last + everyMs - now())));
        ifDue();
      }
    },
    sent: (): number => sent,
  };
}

export function createWatcherActivities(deps: WatcherDeps) {
  const client = deps.client ?? (() => Context.current().client);
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? pause;
  const record = recordOnce(deps);
  const pages = deps.ledger ?? clientLedgerPages(client, deps.owner);
  const summaries = new Map<string, { atMs: number; summary: LedgerSummary }>();
  const summaryKey = (at: WatchInput['at']): string => `${at.cloud}\n${at.region}`;
  /**
   * The pages' summary of `at`, read again at most every quarter of `ledgerKeepMs` per process: a
   * launch changes the view at every look, and 16 queries a look would crowd pages busy taking
   * records. What it serves changes slowly: the names due to be asked about (unseen for half the
   * keep time) and the spot names (a run's own spot creates come from its watcher's input).
   */
  const summaryOf = async (at: WatchInput['at'], t: WatcherTuning): Promise<{ summary: LedgerSummary; fresh: boolean }> => {
    const key = summaryKey(at);
    const kept = summaries.get(key);
    if (kept && now() - kept.atMs < t.ledgerKeepMs / 4) return { summary: kept.summary, fresh: false };
    const summary = await pages.summary(at, t.ledgerKeepMs);
    summaries.set(key, { atMs: now(), summary });
    return { summary, fresh: true };
  };

  /**
   * One look: the open owners first, then the cloud's list (an instance torn down in between
   * then belongs to a VM whose stage is no longer Ready, so it is never called lost).
   */
  const look = async (input: WatchInput): Promise<{ instances: Owned[]; owners: OwnerVm[]; sides?: SideResource[] }> => {
    const p = providerOf(deps.registry, input.at.cloud);
    const owners: OwnerVm[] = [];
    for await (const wf of client().workflow.list({ query: ownersQuery(input) })) {
      const sa = wf.typedSearchAttributes;
      const vmName = sa.get(SA.vmName);
      if (vmName) owners.push({ workflowId: wf.workflowId, vmName, stage: (sa.get(SA.stage) ?? 'pending') as Stage });
    }
    const where = { cloud: input.at.cloud, region: input.at.region };
    const instances = await translated(() => p.inventory(where));
    const sides = p.sideInventory ? await translated(() => p.sideInventory!(where)) : undefined;
    // Before anything is called an orphan: an open vmWorkflow of that name anywhere in the
    // namespace (another region, cloud or task queue) owns it. Deleting a live VM is worse than a late sweep.
    const placed = new Set(owners.map((o) => o.vmName));
    const unowned = [...new Set([...instances, ...(sides ?? [])].map((i) => i.vmName).filter((n) => !placed.has(n)))];
    for (let i = 0; i < unowned.length; i += NAMES_PER_QUERY) {
      for await (const wf of client().workflow.list({ query: openByNameQuery(unowned.slice(i, i + NAMES_PER_QUERY)) })) {
        const vmName = wf.typedSearchAttributes.get(SA.vmName);
        if (vmName) owners.push({ workflowId: wf.workflowId, vmName, stage: (wf.typedSearchAttributes.get(SA.stage) ?? 'pending') as Stage, elsewhere: true });
      }
    }
    return { instances, owners, ...(sides ? { sides } : {}) };
  };

  return {
    /**
     * A cycle's view. Long-polls while idle: looks again at the planned interval until the view
     * changes, someone must be told or something deleted, or `quietWindowMs` is spent, so an
     * idle watcher costs one activity and a few heartbeats per window instead of an activity and
     * a timer per look.
     */
    async watchCycle(input: WatchCycleInput): Promise<WatchView> {
      const startedAt = now();
      // Histories from before a tuning field existed schedule this with it missing.
      const t = withWatcherTuning(input.tuning);
      const hb = heartbeats(heartbeatEveryMs(t), now, sleep);
      hb.ifDue();
      if (input.handover?.length) {
        await pages.merge(input.at, input.taskQueue, input.handover);
        summaries.delete(summaryKey(input.at)); // what the pages hold changed: read them again
      }
      const { summary, fresh } = await summaryOf(input.at, t);
      const asked = fresh ? summary.expiring : [];
      const spot = [...new Set([...(input.spot ?? []), ...summary.spot])];
      const evidence = new Map<string, NameEvidence | undefined>();
      // Only the workflow's own names (`expiring`) come back in the digest; the pages' are answered to them.
      const answer = async (view: CycleView, digest: ViewDigest, signature: string, looks: number): Promise<WatchView> => {
        const found = digest.unowned.flatMap((u) => evidence.get(u.vmName) ?? []);
        const present = [...new Set([...presentIn(view, asked), ...found.map((e) => e.vmName)])];
        await pages.seen(input.at, { present, asked, keepMs: t.ledgerKeepMs });
        return {
          digest,
          signature,
          looks,
          beats: hb.sent(),
          evidence: found,
          ledger: summary.size,
          ...(input.handover ? { handedOver: input.handover.length } : {}),
        };
      };
      for (let looks = 1; ; looks++) {
        hb.ifDue();
        const view = await look(input);
        const signature = viewHash(view);
        const digest = digestOf(view, input.expiring, spot);
        const ask = digest.unowned.map((u) => u.vmName).filter((n) => !evidence.has(n));
        if (ask.length > 0) {
          const got = await pages.evidence(input.at, ask);
          for (const n of ask)
            evidence.set(
              n,
              got.find((e) => e.vmName === n),
            );
        }
        const due = dueIn(digest, input.known, now(), t.orphanGraceMs);
        const waitMs = nextLookInMs(
          digest.cadence,
          input.known.filter((o) => !due.includes(o)),
          due.length,
          now(),
          t,
        );
        if (input.lastSignature === undefined || cycleMustReturn(due.length, signature, input.lastSignature)) return answer(view, digest, signature, looks);
        const windowSpent = now() - startedAt + waitMs >= t.quietWindowMs;
        await hb.pause(waitMs);
        // Return after the wait, not after the look: the next cycle's first look keeps the cadence.
        if (windowSpent) return answer(view, digest, signature, looks);
      }
    },

    /** Start the watcher of `at` unless it runs, record the Ready VM's name in its ledger and wake it (signal-with-start; idempotent by ID). */
    async ensureWatcher(input: WatchInput): Promise<{ workflowId?: string }> {
      beat();
      const workflowId = await record(client(), input, input.vmName ? [{ vmName: input.vmName, wake: true }] : []);
      activityLog('info', 'account watcher running', { workflowId });
      return { workflowId };
    },
  };
}
