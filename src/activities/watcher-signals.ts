/**
 * How activities tell an account watcher of the VM names they are about to create (or that are
 * Ready): `watcherRecordSignal` by signal-with-start to the name's ledger page, and a start of the
 * watcher (a signal-with-start only for Ready and spot names), so the watcher runs and the ledger
 * holds the name before anything is made. Group commit per watcher: one send in flight at a time,
 * callers that come meanwhile ride on the next one together, and a name accepted in the last
 * {@link RECORD_REUSE_MS} is not sent again (a failover's attempts in one region share it).
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ProviderError } from '../core/errors';
import { byPage } from '../core/ledger-pages';
import { mainTaskQueue } from '../core/rate-limits';
import { watcherWorkflowId, type WatcherInput } from '../core/watcher';
import { watcherRecordSignal, type WatcherTuning } from '../core/watcher-api';
import { activityLog } from './activity-log';
import { signalPage } from './ledger-pages';

/** How long a name accepted by a watcher counts as recorded for this process (well inside the ledger's keep time). */
export const RECORD_REUSE_MS = 60_000;

export interface RecordDeps {
  /** The deployment id: part of every watcher's workflow ID. */
  owner: string;
  /** Watcher timings given to watchers this worker starts (GPUPROV_ORPHAN_GRACE sets the grace). */
  watcher?: Partial<WatcherTuning>;
  client?: () => Client;
  now?: () => number;
}

/** One watcher (its cloud and region) on the task queue its vmWorkflows run on. */
export interface RecordTarget {
  at: { cloud: string; region: string };
  taskQueue: string;
}

/** One name to record, with the create key of the create about to be made (none: a Ready VM). */
export interface NameRecord {
  vmName: string;
  createKey?: string;
  /** A Ready VM's record: the watcher looks at once (at most once per 2 s). A create's record does not wake it: nothing to see yet. */
  wake?: boolean;
  /** A create on the spot market (with its `createKey`): the watcher looks at the spot cadence while it is Ready. */
  spot?: boolean;
}

/** Records `names` (none: only wakes it) with the watcher of `target`; resolves to its workflow ID once accepted. */
export type Record = (c: Client, target: RecordTarget, names: readonly (string | NameRecord)[]) => Promise<string>;

interface Batch {
  names: Map<string, NameRecord>;
  sent: Promise<string>;
}

const entryOf = (n: string | NameRecord): NameRecord => (typeof n === 'string' ? { vmName: n } : n);
/** The distinct names of the records `keep` says. */
const namesOf = (names: readonly NameRecord[], keep: (n: NameRecord) => boolean = () => true): string[] => [
  ...new Set(names.filter(keep).map((n) => n.vmName)),
];
const isSpotCreate = (n: NameRecord): boolean => Boolean(n.spot && n.createKey);
const idOf = (n: NameRecord): string => `${n.vmName}\n${n.createKey ?? ''}${n.spot ? '\nspot' : ''}`;

/**
 * Signal-with-start of the ledger pages of `names` (src/core/ledger-pages.ts) recording them, and
 * a start of the watcher of `target` (so it runs before anything is made), side by side: a start
 * that joins the running watcher for plain creates, a signal-with-start carrying only the Ready
 * names (its wake-up) and the spot creates (their cadence) otherwise. Its workflow ID.
 */
async function send(c: Client, deps: RecordDeps, target: RecordTarget, names: NameRecord[]): Promise<string> {
  const { cloud, region } = target.at;
  const workflowId = watcherWorkflowId(deps.owner, cloud, region);
  const start: WatcherInput = { deployment: deps.owner, cloud, region, ...(deps.watcher ? { tuning: deps.watcher } : {}) };
  const wake = names.length === 0 || names.some((n) => n.wake);
  const spotNames = namesOf(names, isSpotCreate);
  const pages = byPage(names, (n) => n.vmName).map(([page, mine]) => {
    const createKeys = mine.flatMap((n) => (n.createKey ? [{ vmName: n.vmName, createKey: n.createKey }] : []));
    const spot = namesOf(mine, isSpotCreate);
    return signalPage(c, deps.owner, target.at, target.taskQueue, page, watcherRecordSignal, {
      vmNames: namesOf(mine),
      ...(createKeys.length > 0 ? { createKeys } : {}),
      ...(spot.length > 0 ? { spotNames: spot } : {}),
    });
  });
  const woken = namesOf(names, (n) => Boolean(n.wake));
  const o = { workflowId, taskQueue: target.taskQueue, args: [start] as [WatcherInput], staticSummary: `account watcher: ${cloud}/${region}` };
  // Plain creates tell the watcher nothing (their names are in the pages): only make sure it runs,
  // which adds no event to a running watcher's history (a signal would add one, and a task).
  const watcher =
    !wake && spotNames.length === 0
      ? c.workflow.start('accountWatcherWorkflow', { ...o, workflowIdConflictPolicy: 'USE_EXISTING' })
      : c.workflow.signalWithStart('accountWatcherWorkflow', {
          ...o,
          signal: watcherRecordSignal,
          signalArgs: [
            {
              vmNames: woken,
              paged: true,
              ...(spotNames.length > 0 ? { spotNames } : {}),
              ...(wake ? { wake } : {}),
              ...(deps.watcher ? { tuning: deps.watcher } : {}),
            },
          ],
        });
  await Promise.all([...pages, watcher]);
  return workflowId;
}

/**
 * The group-committed record of this process. Hazard: a caller must not go on before a signal
 * carrying its name was accepted (the ledger is the sweep's only evidence), so a failed send
 * rejects every caller that rode on it and remembers nothing.
 */
export function recordOnce(deps: RecordDeps): Record {
  const now = deps.now ?? Date.now;
  const accepted = new Map<string, number>();
  const waiting = new Map<string, Batch>();
  const inFlight = new Map<string, Promise<unknown>>();
  return (c, target, given) => {
    const key = `${target.taskQueue}\n${watcherWorkflowId(deps.owner, target.at.cloud, target.at.region)}`;
    const fresh = given.map(entryOf).filter((n) => now() - (accepted.get(`${key}\n${idOf(n)}`) ?? -Infinity) >= RECORD_REUSE_MS);
    if (given.length > 0 && fresh.length === 0) return Promise.resolve(watcherWorkflowId(deps.owner, target.at.cloud, target.at.region));
    const open = waiting.get(key);
    if (open) {
      for (const n of fresh) open.names.set(idOf(n), n);
      return open.sent;
    }
    const names = new Map(fresh.map((n) => [idOf(n), n]));
    const before = inFlight.get(key) ?? Promise.resolve();
    const sent = before
      .catch(() => undefined)
      .then(() => {
        waiting.delete(key);
        return send(c, deps, target, [...names.values()]);
      });
    waiting.set(key, { names, sent });
    inFlight.set(key, sent);
    sent.then(
      () => {
        if (accepted.size > 10_000) accepted.clear();
        for (const n of names.keys()) accepted.set(`${key}\n${n}`, now());
      },
      () => undefined,
    );
    void sent.finally(() => inFlight.get(key) === sent && inFlight.delete(key)).catch(() => undefined);
    return sent;
  };
}

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // unit tests call activities directly
  }
}

/**
 * For the create activity: before it makes side resources and an instance of `vmName` at `at`,
 * record the create with the watcher there (starting it if need be), so that what a workflow
 * terminated mid-create leaves is swept, and only that. The watcher runs on the main task queue
 * of the workflow that scheduled the create (the activity runs on its cloud's queue, named after
 * it). A failure throws a Transient ProviderError: nothing is made without a record.
 */
export function recordBeforeCreate(
  deps: RecordDeps,
): (at: { cloud: string; region: string }, vmName: string, createKey?: string, spot?: boolean) => Promise<void> {
  const record = recordOnce(deps);
  return async (at, vmName, createKey, spot) => {
    const ctx = activityContext();
    if (!ctx) return;
    try {
      const c = deps.client?.() ?? ctx.client;
      const watcher = await record(c, { at: { cloud: at.cloud, region: at.region }, taskQueue: mainTaskQueue(ctx.info.taskQueue, at.cloud) }, [
        createKey ? { vmName, createKey, ...(spot ? { spot } : {}) } : vmName,
      ]);
      activityLog('info', 'create recorded with the account watcher', { workflowId: watcher });
    } catch (err) {
      throw new ProviderError(
        'Transient',
        `could not record the create with the account watcher of ${at.cloud}/${at.region}: ${err instanceof Error ? err.message : String(err)}`,
        {
          cause: err,
        },
      );
    }
  };
}
