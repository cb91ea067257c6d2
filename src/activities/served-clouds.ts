/**
 * The clouds an activities object serves, noted on it by `createActivities` so that `buildWorker`
 * (src/worker.ts) knows which clouds' task queues to poll. Kept light: the worker imports it
 * without loading the cloud SDKs that src/activities/index.ts pulls in.
 */

/** An enumerable symbol: object spread keeps it, `Object.entries` (the SDK's activity list) skips it. */
const SERVED_CLOUDS = Symbol('gpuprov.servedClouds');

/** `activities`, noted as serving `clouds`. */
export function withServedClouds<A extends object>(activities: A, clouds: string[]): A {
  return Object.defineProperty(activities, SERVED_CLOUDS, { value: [...clouds], enumerable: true });
}

/** The clouds noted on `activities`; undefined for objects `createActivities` did not make. */
export function servedClouds(activities: object): string[] | undefined {
  const clouds = (activities as { [SERVED_CLOUDS]?: unknown })[SERVED_CLOUDS];
  return Array.isArray(clouds) ? (clouds as string[]) : undefined;
}
