/**
 * Liveness for every activity: while an activity runs, it heartbeats every {@link HEARTBEAT_EVERY_MS},
 * so the workflows can give activities a heartbeat timeout of seconds (src/workflows/proxies.ts).
 * A worker that dies, or a completion lost to a server outage, is then noticed within that
 * timeout and the (idempotent) activity retried, instead of waiting out its start-to-close
 * timeout of minutes.
 */
import { Context } from '@temporalio/activity';

/** How often a running activity heartbeats (the SDK throttles what it sends to the server). */
export const HEARTBEAT_EVERY_MS = 2_000;

function beat(): void {
  try {
    // A local activity has no heartbeat: the workflow task covers it.
    if (Context.current().info.isLocal) return;
    Context.current().heartbeat();
  } catch {
    /* outside an activity (unit tests call activities directly) */
  }
}

/** Run `fn`, heartbeating at once and then every HEARTBEAT_EVERY_MS until it settles. */
export async function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  beat();
  const timer = setInterval(beat, HEARTBEAT_EVERY_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/** The same activities, each wrapped in {@link heartbeating}. */
export function withLiveness<A extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: A): A {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    out[name] = (...args: never[]) => heartbeating(() => fn(...args));
  }
  return out as A;
}
