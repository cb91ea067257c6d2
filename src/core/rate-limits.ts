/**
 * Per-cloud task queues and their rate limits. Every activity that calls a cloud's API (prepare,
 * create, observe, delete, clean up, inventory) runs on `<main queue>-cloud-<cloud>`; the worker
 * polls that queue with `maxTaskQueueActivitiesPerSecond` set to the cloud's limit.
 *
 * Why the task-queue limit and not the worker's own `maxActivitiesPerSecond`: vendors limit per
 * account (or project), not per host. The task-queue limit is enforced by the Temporal server's
 * matching service for the whole queue, so N workers on N hosts together stay under it; a per-worker
 * limit would let N workers send N times the vendor's rate.
 *
 * The server's limiter is a token bucket per queue partition, so an idle queue may start a second's
 * burst above the rate; each worker process also spaces its own calls to a cloud at the same rate
 * (src/providers/pacer.ts, which covers the plan activity on the main queue too).
 *
 * An activity is not one API call: `prepareAndCreate` makes a few, and one `awaitRunning` attempt
 * may look more than once within its inline window (src/activities/look-again.ts). The defaults
 * therefore sit below the vendors' documented rates. The defaults, with their sources, are the
 * `rateLimit` column of the cloud table (src/core/clouds.ts).
 */
import { factsOf } from './clouds';
import { InputError } from './errors';

/** The task queue of `cloud`'s API activities, beside the main queue `mainQueue`. */
export function cloudTaskQueue(mainQueue: string, cloud: string): string {
  return `${mainQueue}-cloud-${cloud}`;
}

/** The main queue of an activity running on `taskQueue` for `cloud`: {@link cloudTaskQueue} undone (a main queue stays as it is). */
export function mainTaskQueue(taskQueue: string, cloud: string): string {
  const suffix = `-cloud-${cloud}`;
  return taskQueue.endsWith(suffix) ? taskQueue.slice(0, -suffix.length) : taskQueue;
}

/** The environment variable overriding `cloud`'s limit: `GPUPROV_RATE_<CLOUD>`. */
export function rateEnvName(cloud: string): string {
  return `GPUPROV_RATE_${cloud.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * Activities per second for `cloud`: `GPUPROV_RATE_<CLOUD>` when set, else the cloud table's default,
 * else undefined (no limit). `0` or `none` in the variable lifts the limit. A value that is not a
 * positive number throws InputError (the worker exits 2 naming the variable).
 */
export function rateLimitFor(cloud: string, env: Readonly<Record<string, string | undefined>>): number | undefined {
  const name = rateEnvName(cloud);
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return defaultRate(cloud);
  if (raw === '0' || raw.toLowerCase() === 'none') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new InputError(name, `"${raw}" is not a rate: activities per second, a positive number`, `${name}=5 (or 0 for no limit)`);
  }
  return n;
}

/** The cloud table's default for `cloud`; undefined for a cloud without a vendor API, or unknown. */
function defaultRate(cloud: string): number | undefined {
  const r = factsOf(cloud)?.rateLimit;
  return r ? r.perSecond : undefined;
}
