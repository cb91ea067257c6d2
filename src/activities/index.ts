/**
 * Activities: thin, idempotent wrappers over provider primitives or one SSH action. Waiting is
 * Temporal's: a not-ready observation throws a retryable `NotReady` failure and the activity's
 * retry policy does the polling (looks due within a second or two are taken in the same attempt:
 * `look-again.ts`). Nothing returned here holds a secret.
 */
import { createAttemptActivities } from './attempt';
import { createK3sActivities } from './k3s';
import { createBootstrapActivities } from './bootstrap';
import { withServedClouds } from './served-clouds';
import { createWatcherActivities } from './watcher';
import { recordBeforeCreate } from './watcher-signals';
import { capacityNoter } from './capacity-memory';
import { withLiveness } from './liveness';
import { createPlanActivities } from './plan';
import { createInstanceStepActivities } from './instance-steps';
import { createReservedActivities } from './reserved';
import type { ActivityDeps } from './deps';

export type { ActivityDeps } from './deps';
export type { PlanInput, PlanOutput } from './plan';
export type { BlockOfferingsInput, BlockOfferingsOutput, BuyBlockInput } from './reserved';
export { SSH_LOOK_DELAY_MS, VANISH_GRACE_MS, type AwaitRunningInput, type ProbeInput, type RunningInstance } from './instance-steps';

export function createActivities(deps: ActivityDeps) {
  // buildWorker runs a worker on each of these clouds' task queues (src/core/rate-limits.ts).
  return withServedClouds(activitiesOf(deps), deps.registry.names());
}

function activitiesOf(deps: ActivityDeps) {
  const now = deps.now ?? Date.now;
  const memory = { ...(deps.capacityMemoryMs !== undefined ? { capacityMemoryMs: deps.capacityMemoryMs } : {}), now };
  const liveness = withLiveness({
    ...createK3sActivities(deps),
    ...createBootstrapActivities(deps),
    ...createAttemptActivities({
      registry: deps.registry,
      publicKey: deps.ssh.publicKey,
      keyFingerprint: deps.ssh.fingerprint,
      owner: deps.owner,
      now,
      beforePrepare: recordBeforeCreate({ owner: deps.owner, ...(deps.watcher ? { watcher: deps.watcher } : {}) }),
      noteCapacity: capacityNoter(memory),
    }),
    ...createPlanActivities(deps),
    ...createInstanceStepActivities(deps),
    ...createReservedActivities(deps),
  });
  // The watcher's cycle heartbeats itself, every half its heartbeat timeout (a heartbeat is a billed
  // action on Temporal Cloud; a long-polling cycle heartbeating every 2 s would cost more than it saves).
  return { ...liveness, ...createWatcherActivities(deps) };
}

export type Activities = ReturnType<typeof activitiesOf>;
