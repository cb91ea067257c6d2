/**
 * Workflow patch ids (`patched()`) of the launch and teardown steps (the k3s step's K3S_PATCH
 * lives with its access rules in src/k3s/access.ts). A patch guards a change of the commands a
 * workflow issues, so that histories recorded before it still replay.
 */

/**
 * One activity for prepare + create and one for delete + wait gone + clean up (BENCHMARKS.md,
 * P2/P5): 14 history events and 2 round trips per failed attempt instead of 33 and 5.
 */
export const CLOUD_CALLS_PATCH = 'gpuprov-merged-cloud-calls-v1';

/**
 * The fleet tells a child's reported end from its close (a slot is destroyed, and replaced, only
 * once its child workflow has closed) and handles `k8s-failed` by the group's onK8sFailure
 * (teardown or keep) instead of reading it as "VM ended".
 */
export const FLEET_CHILD_CLOSED_PATCH = 'gpuprov-fleet-child-closed-v1';

/**
 * A VM that becomes Ready makes sure the account watcher of its cloud and region runs (one
 * `ensureWatcher` activity: signal-with-start), and listens for its `instanceLost` signal.
 */
export const WATCHER_PATCH = 'gpuprov-account-watcher-v1';

/** The account watcher deletes the orphans due in one cycle side by side, not one after another. */
export const WATCHER_PARALLEL_SWEEP_PATCH = 'gpuprov-watcher-parallel-sweep-v1';

/** `--parallel N` (N > 1): the hedged search of workflows/hedged-launch.ts instead of the serial loop. */
export const HEDGE_PATCH = 'gpuprov-hedged-launch-v1';

/** A launch whose attempt answered Capacity tells the deployment's capacity memory (src/workflows/capacity-memory.ts). */
export const CAPACITY_MEMORY_PATCH = 'gpuprov-capacity-memory-v1';

/**
 * A launch tells the capacity memory of a Capacity answer (`rememberCapacity`, a signal-with-start
 * of milliseconds) as a local activity: one marker event instead of scheduled/started/completed
 * and a workflow task per failed attempt (BENCHMARKS.md, P2). Longer steps (the plan, the SSH
 * probe) stay activities: a query waits while a local activity runs. `ensureWatcher` stays one
 * too: as a local activity at Ready it cost the lifecycle more workflow tasks than it saved.
 */
export const LOCAL_CALLS_PATCH = 'gpuprov-local-temporal-calls-v1';

/**
 * A launch tells the capacity memory of a Capacity answer inside the attempt's release
 * (`releaseAt` with `capacity`), not as a local activity: a local activity holds the workflow task
 * that schedules the release open until it answers (20–60 ms per failed attempt in P5), and adds a
 * marker event per attempt.
 */
export const CAPACITY_NOTE_PATCH = 'gpuprov-capacity-note-in-release-v1';
