/**
 * The scale bench's counting: history length and size of every workflow run in the namespace
 * (every run, closed and continued ones too, so a continue-as-new inside a window loses nothing),
 * the fake clouds' calls by primitive, and the watcher histories' largest event.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { FakeProvider } from '../test/harness/fake-provider';
import { eventsOf, kindOf, timeOf, type HistoryEvent } from './history';

export interface RunCount {
  type: string;
  workflowId: string;
  runId: string;
  events: number;
  bytes: number;
}

export interface Census {
  atMs: number;
  runs: Map<string, RunCount>;
}

/** `fn` over `items`, `width` at a time. */
export async function inBatches<T, R>(items: readonly T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

/** Every run's history length and bytes (describe: exact for open runs, where visibility's are stale). */
export async function census(client: Client): Promise<Census> {
  const listed: { type: string; workflowId: string; runId: string }[] = [];
  for await (const w of client.workflow.list()) listed.push({ type: w.type, workflowId: w.workflowId, runId: w.runId });
  const atMs = Date.now();
  const rows = await inBatches(listed, 25, async (w): Promise<RunCount | undefined> => {
    try {
      const d = await client.workflow.getHandle(w.workflowId, w.runId).describe();
      return { ...w, events: d.historyLength, bytes: d.historySize ?? 0 };
    } catch {
      return undefined;
    }
  });
  const runs = new Map<string, RunCount>();
  for (const r of rows) if (r) runs.set(`${r.workflowId}/${r.runId}`, r);
  return { atMs: Math.round((atMs + Date.now()) / 2), runs };
}

/** New events and bytes between two censuses, by workflow type (a run absent before counts whole). */
export function growth(a: Census, b: Census): Record<string, { events: number; bytes: number; runs: number }> {
  const out: Record<string, { events: number; bytes: number; runs: number }> = {};
  for (const [k, r] of b.runs) {
    const before = a.runs.get(k);
    const t = (out[r.type] ??= { events: 0, bytes: 0, runs: 0 });
    t.events += r.events - (before?.events ?? 0);
    t.bytes += r.bytes - (before?.bytes ?? 0);
    t.runs += 1;
  }
  return out;
}

/** Calls to the fake clouds so far, by primitive (failed ones too: the vendor counts them). */
export function cloudCalls(fakes: readonly FakeProvider[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of fakes) for (const c of f.calls) out[c.primitive] = (out[c.primitive] ?? 0) + 1;
  return out;
}

export function minus(b: Record<string, number>, a: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(b)) if (b[k]! - (a[k] ?? 0) !== 0) out[k] = b[k]! - (a[k] ?? 0);
  return out;
}

export const total = (r: Record<string, number>): number => Object.values(r).reduce((x, y) => x + y, 0);

export function eventBytes(e: HistoryEvent): number {
  return temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
}

/** Histories of the given runs (every run of the watchers). */
export async function historiesOf(client: Client, runs: readonly RunCount[]): Promise<HistoryEvent[][]> {
  return inBatches(runs, 10, (r) => eventsOf(client.workflow.getHandle(r.workflowId, r.runId)));
}

/** The largest event over these histories, with its kind. */
export function largestEvent(histories: readonly HistoryEvent[][]): { bytes: number; kind: string } {
  let best = { bytes: 0, kind: '-' };
  for (const h of histories)
    for (const e of h) {
      const b = eventBytes(e);
      if (b > best.bytes) best = { bytes: b, kind: kindOf(e) };
    }
  return best;
}

/** Events whose time falls within [fromMs, toMs] (what a window added to these histories). */
export function eventsWithin(histories: readonly HistoryEvent[][], fromMs: number, toMs: number): HistoryEvent[] {
  return histories.flatMap((h) => h.filter((e) => timeOf(e) >= fromMs && timeOf(e) <= toMs));
}
