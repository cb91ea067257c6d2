/**
 * The ledger pages (src/core/ledger-pages.ts) as the watcher's look and the create's record reach
 * them: queries and signals through the worker's client, grouped by page. A page never started,
 * or ended because it held nothing, answers nothing.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import { ledgerEvidenceQuery, ledgerMergeSignal, ledgerSeenSignal, ledgerSummaryQuery } from '../core/ledger-api';
import { LEDGER_PAGES, byPage, ledgerPageId, type LedgerPageInput, type LedgerSeen, type LedgerSummary, type NameEvidence } from '../core/ledger-pages';
import type { LedgerEntry } from '../core/watcher-ledger';
import { activityLog } from './activity-log';

type At = { cloud: string; region: string };

/** What the watcher's look needs of the pages of one (deployment, cloud, region). */
export interface LedgerPages {
  /** All pages' summaries together: total size, spot names, names to ask about. */
  summary(at: At, keepMs: number): Promise<LedgerSummary>;
  /** Of `names`, those recorded, with their keys. Throws when a page cannot answer (absence is never assumed). */
  evidence(at: At, names: readonly string[]): Promise<NameEvidence[]>;
  /** Tell each page what the look saw of its names. */
  seen(at: At, seen: LedgerSeen): Promise<void>;
  /** Hand entries over to their pages (signal-with-start on `taskQueue`). */
  merge(at: At, taskQueue: string, entries: readonly LedgerEntry[]): Promise<void>;
}

const gone = (err: unknown): boolean => err instanceof WorkflowNotFoundError;

/** How long a page may take to answer: a page whose task queue has no worker otherwise holds the look until the call's own deadline. */
const QUERY_MS = 5_000;

/**
 * Signal-with-start of one ledger page (on `taskQueue`, the watcher's): how creates record their
 * names (`watcherRecordSignal`) and a watcher hands its carried entries over (`ledgerMergeSignal`).
 */
export function signalPage<A>(c: Client, owner: string, at: At, taskQueue: string, page: number, signal: SignalDefinition<[A]>, arg: A): Promise<unknown> {
  return c.workflow.signalWithStart('ledgerPageWorkflow', {
    workflowId: ledgerPageId(owner, at.cloud, at.region, page),
    taskQueue,
    args: [{ deployment: owner, ...at, page } satisfies LedgerPageInput],
    signal,
    signalArgs: [arg],
    staticSummary: `ledger page ${page}: ${at.cloud}/${at.region}`,
  });
}

/** The pages of deployment `owner`, through `client`. */
export function clientLedgerPages(client: () => Client, owner: string): LedgerPages {
  const handle = (at: At, page: number) => client().workflow.getHandle(ledgerPageId(owner, at.cloud, at.region, page));
  const bounded = <T>(call: () => Promise<T>): Promise<T> => client().connection.withDeadline(Date.now() + QUERY_MS, call);
  const pages = Array.from({ length: LEDGER_PAGES }, (_, i) => i);
  return {
    async summary(at, keepMs) {
      const each = await Promise.all(
        pages.map((p) =>
          bounded(() => handle(at, p).query(ledgerSummaryQuery, keepMs)).catch((err: unknown): LedgerSummary => {
            if (!gone(err)) activityLog('warn', 'ledger page not read; its spot and expiring names wait for the next look', { page: p, error: String(err) });
            return { size: 0, spot: [], expiring: [] };
          }),
        ),
      );
      return { size: each.reduce((n, s) => n + s.size, 0), spot: each.flatMap((s) => s.spot).sort(), expiring: each.flatMap((s) => s.expiring) };
    },
    async evidence(at, names) {
      const each = await Promise.all(
        byPage(names, (n) => n).map(([p, asked]) =>
          bounded(() => handle(at, p).query(ledgerEvidenceQuery, asked)).catch((err: unknown) => {
            if (gone(err)) return [];
            throw err;
          }),
        ),
      );
      return each.flat();
    },
    async seen(at, seen) {
      const present = new Map(byPage(seen.present, (n) => n));
      const asked = new Map(byPage(seen.asked, (n) => n));
      const touched = [...new Set([...present.keys(), ...asked.keys()])];
      await Promise.all(
        touched.map((p) =>
          handle(at, p)
            .signal(ledgerSeenSignal, { present: present.get(p) ?? [], asked: asked.get(p) ?? [], keepMs: seen.keepMs })
            .catch((err: unknown) => {
              // A page that ended held nothing to refresh or forget.
              if (!gone(err)) throw err;
            }),
        ),
      );
    },
    async merge(at, taskQueue, entries) {
      await Promise.all(
        byPage(entries, (e) => e.vmName).map(([page, given]) => signalPage(client(), owner, at, taskQueue, page, ledgerMergeSignal, [...given])),
      );
    },
  };
}
