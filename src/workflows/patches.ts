/**
 * Workflow patch ids (`patched()`), in one place. A patch guards a change of the commands a
 * workflow issues, so that histories recorded before it still replay.
 */

/**
 * One activity for prepare + create and one for delete + wait gone + clean up (BENCHMARKS.md,
 * P2/P5): 14 history events and 2 round trips per failed attempt instead of 33 and 5.
 */
export const CLOUD_CALLS_PATCH = 'gpuprov-merged-cloud-calls-v1';
