/**
 * The two cloud calls of a launch attempt that change something, each one activity (one round
 * trip, three history events): prepare + create, and release (delete, wait until gone, clean up).
 * Both are idempotent, so Temporal may retry them after a crash at any point.
 *
 * A create the cloud refuses for room (a failover's usual end) is released by the create activity
 * itself, and its failure says so (`released`): the workflow then has nothing to compensate, which
 * saves every failed attempt an activity and a workflow task. The workflow compensates anything
 * else, and any refusal the activity could not release in time:
 *
 * | the create's failure kind        | released in the create activity        | the workflow      |
 * |----------------------------------|----------------------------------------|-------------------|
 * | Capacity, Quota                  | full (instances by this create's key, then side resources), within {@link INLINE_RELEASE_MS}; Capacity tells the capacity memory | nothing, when `released` |
 * | Unavailable (nothing created)    | side resources                         | nothing, when `released` |
 * | any other, or the release failed | —                                      | compensates (releaseAt) |
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, type FailureDetails } from '../core/failures';
import type { ErrorKind } from '../core/errors';
import { locationOf } from '../core/offers';
import { mainTaskQueue } from '../core/rate-limits';
import type { CapacityOffer } from '../core/capacity-memory';
import type { ProviderRegistry } from '../providers/registry';
import type { CloudProvider, InstanceSpec, Json, Location, Observed, Offer } from '../core/provider';
import { createOrAdopt, findExisting, type CreateResult, type Found } from './create-or-adopt';
import { toFailure, translated } from './failures';
import { activitySleep } from './look-again';
import { activityLog } from './activity-log';
import { createKeyOf } from '../providers/create-key';
import { releaseScope } from '../core/release-scope';

export interface AttemptDeps {
  registry: ProviderRegistry;
  /** The worker's OpenSSH public key, added to every instance. */
  publicKey: string;
  /** `SHA256:…` of that key, returned by the create so that the VM records which key it trusts. */
  keyFingerprint?: string;
  /** The worker's deployment: every spec's `owner` (the workflow's own value, the namespace, is replaced). */
  owner?: string;
  now?: () => number;
  /** Injected for tests; default: the activity context's cancellable sleep. */
  sleep?: (ms: number) => Promise<void>;
  /** Injected for tests; default: the activity context's heartbeat. */
  heartbeat?: () => void;
  /** Run before anything of `vmName` is made at `at` (side resources, then the instance): the account watcher's record; a throw fails the create before anything is made. */
  beforePrepare?: (at: Location, vmName: string, createKey?: string, spot?: boolean) => Promise<void>;
  /** Tell the capacity memory on `taskQueue` that `offer` answered Capacity; must not throw (see {@link ReleaseInput.capacity}). */
  noteCapacity?: (taskQueue: string, offer: CapacityOffer) => Promise<void>;
}

export interface ReleaseInput {
  at: Location;
  vmName: string;
  /** Known ids; the delete also finds instances by identity. */
  instanceIds: string[];
  /** `cleanup`: only side resources (nothing can have been created). */
  mode: 'full' | 'cleanup';
  /** The cloud's poll interval: drives how often the gone wait looks. */
  pollIntervalMs: number;
  /** Epoch ms after which instances still present fail the release (non-retryable: the VM shows `leaked`). */
  deadlineAtMs: number;
  /**
   * The attempt being released answered Capacity: tell the deployment's capacity memory (on the
   * launch's main `taskQueue`) alongside the release, on its first try, best effort. Carried here
   * rather than as a step of its own so that it costs the failover no workflow task and no time
   * (a step of its own, or a local activity, would hold the workflow task open per failed attempt).
   */
  capacity?: { offer: CapacityOffer; taskQueue: string };
  /**
   * The idempotency keys of the creates this release undoes (a workflow cannot hash them) and/or
   * their create keys (the watcher's ledger holds those): an instance of the name that another
   * create made is spared (src/core/release-scope.ts). Absent: everything of the name is deleted.
   */
  idempotencyKeys?: string[];
  createKeys?: string[];
  /** Ids this release never deletes (a preempted instance retiring beside its replacement: src/core/release-scope.ts). */
  keepIds?: string[];
  /** Delete only `instanceIds`, sparing every other instance of the name (the retiring instance's own deletion). */
  exact?: boolean;
}

/** How long the create activity spends releasing a refused create before leaving it to the workflow. */
export const INLINE_RELEASE_MS = 30_000;

/** The refusals the create activity releases itself (the search goes on after them). */
const RELEASED_HERE: readonly ErrorKind[] = ['Capacity', 'Quota', 'Unavailable'];

/** The create keys a release knows, or undefined when it knows none. */
function keysOf(input: ReleaseInput): string[] | undefined {
  const keys = [...(input.createKeys ?? []), ...(input.idempotencyKeys ?? []).map(createKeyOf)];
  return keys.length > 0 ? keys : undefined;
}

/** How often the gone wait looks: half the poll interval at first, backing off to twice it. */
export function goneDelays(pollIntervalMs: number): (look: number) => number {
  const first = Math.max(100, Math.round(pollIntervalMs / 2));
  const max = Math.max(1_000, pollIntervalMs * 2);
  return (look) => Math.min(max, Math.round(first * 1.5 ** look));
}

const isLive = (o: Observed): boolean => o.status !== 'Terminating';

/** The main task queue of the activity running now (the launch's), or undefined outside an activity (unit tests). */
function mainQueueOf(cloud: string): string | undefined {
  try {
    return mainTaskQueue(Context.current().info.taskQueue, cloud);
  } catch {
    return undefined;
  }
}

function heartbeatOrNothing(): void {
  try {
    Context.current().heartbeat();
  } catch {
    /* outside an activity (unit tests) */
  }
}

export function providerOf(registry: ProviderRegistry, cloud: string): CloudProvider {
  try {
    return registry.get(cloud);
  } catch (err) {
    throw toFailure(err);
  }
}

/** The spec as this worker creates it: its key first, and its deployment as the owner (when given). */
export function withWorkerKey(spec: InstanceSpec, key: string, owner?: string): InstanceSpec {
  const s = owner === undefined || spec.owner === owner ? spec : { ...spec, owner };
  return s.publicKeys.includes(key) ? s : { ...s, publicKeys: [key, ...s.publicKeys] };
}

/** The create's result naming the worker key it installed (the VM's status records it). */
export function withKeyFingerprint(r: CreateResult, fingerprint: string | undefined): CreateResult {
  return fingerprint ? { ...r, workerKeyFingerprint: fingerprint } : r;
}

export function createAttemptActivities(deps: AttemptDeps) {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? activitySleep;
  const heartbeat = deps.heartbeat ?? heartbeatOrNothing;

  return {
    /**
     * Prepare the offer's side resources, then create the instance, or adopt one that already
     * carries this VM's identity (a retry after a lost response or a crash). A failure of the
     * prepare step carries `phase: 'prepare'` in its details: nothing can have been created.
     * The result names the worker key installed (`workerKeyFingerprint`).
     */
    async prepareAndCreate(offer: Offer, spec: InstanceSpec): Promise<CreateResult> {
      const p = providerOf(deps.registry, offer.cloud);
      const s = withWorkerKey(spec, deps.publicKey, deps.owner);
      // Side resources and then an instance exist from here: their account watcher must hold the
      // record of this create even if this workflow is terminated before it ends (it sweeps only
      // what this deployment recorded and no open workflow owns).
      try {
        await deps.beforePrepare?.({ cloud: offer.cloud, region: offer.region }, s.vmName, createKeyOf(s.idempotencyKey), offer.market === 'spot');
      } catch (err) {
        throw toFailure(err, 'prepare');
      }
      let prepared: Json = null;
      let found: Found;
      try {
        found = await findExisting(p, offer, s);
        if (!found.own) prepared = await p.prepare(offer, s);
      } catch (err) {
        throw toFailure(err, 'prepare');
      }
      let created: CreateResult;
      try {
        created = await translated(() => createOrAdopt(p, offer, prepared, s, found));
      } catch (err) {
        throw await releasedIfRefused(p, offer, s, err);
      }
      activityLog('info', created.adopted ? 'adopted the instance a previous try created' : 'instance created', {
        instanceId: created.instanceId,
        region: offer.region,
        instanceType: offer.instanceType,
      });
      return withKeyFingerprint(created, deps.keyFingerprint);
    },

    /**
     * Delete every instance of the VM at `at`, wait (heartbeating) until the cloud lists none,
     * then clean up side resources; an instance still listed live is deleted again every third
     * look. Transient cloud errors fail the attempt (retried by the policy); past the deadline
     * it fails for good.
     */
    async releaseAt(input: ReleaseInput): Promise<void> {
      const p = providerOf(deps.registry, input.at.cloud);
      // Liveness for the heartbeat timeout, also while a slow delete or cleanup call runs.
      const beat = setInterval(heartbeat, 5_000);
      const noted = input.capacity && Context.current().info.attempt === 1 ? deps.noteCapacity?.(input.capacity.taskQueue, input.capacity.offer) : undefined;
      try {
        await Promise.all([release(p, input), noted]);
        activityLog('info', input.mode === 'full' ? 'released: no instance left, side resources cleaned up' : 'side resources cleaned up', {
          region: input.at.region,
        });
      } finally {
        clearInterval(beat);
      }
    },
  };

  /** The create's failure, released here when the table in the header says so (`released` in its details), else as it was. */
  async function releasedIfRefused(p: CloudProvider, offer: Offer, s: InstanceSpec, err: unknown): Promise<unknown> {
    const d = err instanceof ApplicationFailure ? (err.details?.[0] as FailureDetails | undefined) : undefined;
    if (!(err instanceof ApplicationFailure) || !err.nonRetryable || !d || !RELEASED_HERE.includes(d.kind)) return err;
    const input: ReleaseInput = {
      at: locationOf(offer),
      vmName: s.vmName,
      instanceIds: [],
      mode: d.kind === 'Unavailable' ? 'cleanup' : 'full',
      pollIntervalMs: p.capabilities().pollIntervalMs,
      deadlineAtMs: now() + INLINE_RELEASE_MS,
      idempotencyKeys: [s.idempotencyKey],
      ...(s.besides?.length ? { keepIds: s.besides } : {}),
    };
    const queue = mainQueueOf(offer.cloud);
    try {
      await Promise.all([release(p, input), d.kind === 'Capacity' && queue ? deps.noteCapacity?.(queue, offer) : undefined]);
    } catch (e) {
      activityLog('warn', 'the refused create was not released here: the workflow compensates', { error: e instanceof Error ? e.message : String(e) });
      return err;
    }
    activityLog('info', `create refused (${d.kind}): released here`, { region: offer.region });
    return ApplicationFailure.create({ type: err.type ?? d.kind, message: err.message, nonRetryable: true, details: [{ ...d, released: true }] });
  }

  /** What of the name at `input.at` this release may delete, and what it must spare (none without create keys or limits). */
  async function scopeOf(p: CloudProvider, input: ReleaseInput, keys: string[] | undefined): Promise<{ listed: Observed[]; own: string[]; spare: string[] }> {
    const listed = await translated(() => p.observe(input.at, input.vmName));
    return { listed, ...releaseScope(listed, input.instanceIds, keys, { keep: input.keepIds ?? [], exact: input.exact === true }) };
  }

  async function release(p: CloudProvider, input: ReleaseInput): Promise<void> {
    const keys = keysOf(input);
    // With create keys (or ids to keep, or an exact release), look first: delete exactly what this release's creates made.
    const before = keys || input.exact || input.keepIds?.length ? await scopeOf(p, input, keys) : undefined;
    let spare = before?.spare ?? [];
    if (spare.length > 0) activityLog('info', 'another create made an instance of this name here: spared', { instanceIds: spare, region: input.at.region });
    if (input.mode === 'full') {
      const own = [...new Set([...input.instanceIds, ...(before?.own ?? [])])];
      await translated(() => (spare.length > 0 ? p.delete(input.at, input.vmName, own, true) : p.delete(input.at, input.vmName, input.instanceIds)));
      const delay = goneDelays(input.pollIntervalMs);
      for (let look = 0; ; look++) {
        const scope = await scopeOf(p, input, keys);
        spare = scope.spare;
        const seen = scope.listed.filter((o) => !spare.includes(o.id));
        if (seen.length === 0) break;
        const what = seen.map((o) => `${o.id}=${o.status}`).join(', ');
        if (now() >= input.deadlineAtMs) {
          throw ApplicationFailure.create({
            type: FAILURE_TYPES.NotReady,
            nonRetryable: true,
            message: `${seen.length} instance(s) still present at the deadline: ${what}`,
          });
        }
        const live = seen.filter(isLive).map((o) => o.id);
        if (live.length > 0 && look % 3 === 2) await translated(() => p.delete(input.at, input.vmName, live, spare.length > 0));
        await sleep(Math.min(delay(look), Math.max(0, input.deadlineAtMs - now())));
      }
    }
    // Side resources are per name: while another create's instance lives, they serve it (its own release cleans up).
    if (spare.length === 0) await translated(() => p.cleanup(input.at, input.vmName));
  }
}
