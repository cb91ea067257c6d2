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
 * therefore sit below the vendors' documented rates.
 */
import { InputError } from './errors';

/** One row of the defaults table: activities per second, and where the vendor documents its limit. */
export interface CloudRateLimit {
  perSecond: number;
  source: string;
}

/**
 * Default activities per second per cloud, from each vendor's documented API limits (searched
 * December 2026). Clouds without a vendor API (`local`, `docker`) and unknown clouds have no limit.
 *
 * | cloud          | documented limit                                                             | default /s |
 * |----------------|------------------------------------------------------------------------------|-----------:|
 * | aws            | EC2 token buckets per account and region: non-mutating actions refill 20/s;   |         10 |
 * |                | RunInstances resource bucket 1000, refill 2 instances/s                      |            |
 * | gcp            | Compute Engine: 1,500 requests/min per project per group (read, list, default) |         20 |
 * | digitalocean   | 250 requests/min, 5,000/hour per token                                        |          4 |
 * | lambda         | Lambda Cloud: about 1 request/s; launch once per 10 s                         |          1 |
 * | vastai         | a minimum interval per endpoint and identity, values not published           |          2 |
 * | runpod         | per-user minute/hour/day quotas, values only in RateLimit-Policy headers     |          2 |
 * | others         | not documented where we searched: a conservative default                     |          2 |
 */
export const RATE_LIMITS: Readonly<Record<string, CloudRateLimit>> = {
  aws: { perSecond: 10, source: 'https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html' },
  gcp: { perSecond: 20, source: 'https://cloud.google.com/compute/api-quota' },
  digitalocean: { perSecond: 4, source: 'https://docs.digitalocean.com/reference/api/ (ratelimit-limit: 5000/hour, 250/minute)' },
  lambda: { perSecond: 1, source: 'https://docs.lambdalabs.com/cloud/rate-limiting/' },
  vastai: { perSecond: 2, source: 'https://docs.vast.ai/api-reference/rate-limits-and-errors' },
  runpod: { perSecond: 2, source: 'https://docs.runpod.io/api-reference-v2/rate-limits' },
  primeintellect: { perSecond: 2, source: 'not documented: conservative default' },
  hyperstack: { perSecond: 2, source: 'not documented: conservative default' },
  verda: { perSecond: 2, source: 'not documented: conservative default' },
  massedcompute: { perSecond: 2, source: 'not documented: conservative default' },
  nebius: { perSecond: 2, source: 'not documented: conservative default' },
};

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
 * Activities per second for `cloud`: `GPUPROV_RATE_<CLOUD>` when set, else the table's default,
 * else undefined (no limit). `0` or `none` in the variable lifts the limit. A value that is not a
 * positive number throws InputError (the worker exits 2 naming the variable).
 */
export function rateLimitFor(cloud: string, env: Readonly<Record<string, string | undefined>>): number | undefined {
  const name = rateEnvName(cloud);
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return RATE_LIMITS[cloud]?.perSecond;
  if (raw === '0' || raw.toLowerCase() === 'none') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new InputError(name, `"${raw}" is not a rate: activities per second, a positive number`, `${name}=5 (or 0 for no limit)`);
  }
  return n;
}
