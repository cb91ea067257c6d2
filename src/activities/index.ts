/**
 * Activities: thin, idempotent wrappers over provider primitives or one SSH action. Waiting is
 * Temporal's: a not-ready observation throws a retryable `NotReady` failure and the activity's
 * retry policy does the polling (looks due within a second or two are taken in the same attempt:
 * `look-again.ts`). Nothing returned here holds a secret.
 */
import { ProviderError } from '../core/errors';
import { FAILURE_TYPES, type FailureDetails } from '../core/failures';
import { defaultClouds } from '../providers/default-registry';
import type { ProviderRegistry } from '../providers/registry';
import type { Capabilities, Location, Observed, Offer, QuotaShortfall, ResourceRequest } from '../core/provider';
import { bootPollDelayMs } from '../core/polling';
import { explainNoMatch, matchOffers, noOffersKind } from '../core/offer-match';
import { imageDiskProblem } from '../core/image-disk';
import { createAttemptActivities, providerOf } from './attempt';
import { lookAgain } from './look-again';
import { withLiveness } from './liveness';
import { bootFailed, notReady, toFailure, translated } from './failures';
import {
  ProbeCommandError,
  requireWorkerKey,
  SshError,
  sshFailure,
  sshProber,
  type ProbeResult,
  type SshIdentity,
  type SshProber,
  type WorkerKeyRef,
} from '../ssh';
import { ApplicationFailure } from '@temporalio/common';
import type { SshEndpoint } from '../core/provider';
import { createK3sActivities } from './k3s';
import { createBootstrapActivities } from './bootstrap';
import { activityLog } from './activity-log';
import { withServedClouds } from './served-clouds';
import { createWatcherActivities } from './watcher';
import { recordBeforeCreate } from './watcher-signals';
import type { WatcherTuning } from '../core/watcher-api';
import { capacityNoter, readCapacityMemory } from './capacity-memory';
import { withinQuota, type QuotaNotes } from './quota';
import { demoteRemembered, type DemotedOffer } from '../core/capacity-memory';

export interface ActivityDeps {
  registry: ProviderRegistry;
  /** The worker's SSH identity (its public key is added to every instance). */
  ssh: SshIdentity;
  /** The owning deployment (GPUPROV_DEPLOYMENT, else the namespace): every spec's owner, as the registry's adapters were built with it. */
  owner: string;
  /** SSH probe; tests of the in-memory FakeProvider pass their own. */
  prober?: SshProber;
  /** Clock, for tests. */
  now?: () => number;
  /**
   * How long one boot-wait or SSH-probe attempt keeps looking by itself (default INLINE_WINDOW_MS);
   * 0: every look is its own activity attempt (the bench compares schedules that way).
   */
  inlineWindowMs?: number;
  /** Timings of the account watchers this worker starts (GPUPROV_ORPHAN_GRACE sets the orphan grace). */
  watcher?: Partial<WatcherTuning>;
  /** How long an offer that answered Capacity is tried last (ms; 0: off). Default: `GPUPROV_CAPACITY_MEMORY` or 3 minutes. */
  capacityMemoryMs?: number;
}

export interface PlanInput {
  /** Only clouds that can run k3s (the user asked for --k8s explicitly). */
  requireK8s?: boolean;
  clouds?: string[];
  request: ResourceRequest;
  /** A listing (`provision offers`): a cloud that fails is skipped with its reason, and no offer is not an error. */
  listOnly?: boolean;
}

export interface PlanOutput {
  offers: Offer[];
  /** Capabilities of every cloud that produced offers (drives polling and k3s policy). */
  capabilities: Record<string, Capabilities>;
  /** Clouds that could not plan, and why (shown to the user, not fatal while another cloud plans). */
  skipped: { cloud: string; kind: string; message: string }[];
  /** Offers the deployment's capacity memory moved to the end of the plan, and why (absent in older histories). */
  demoted?: DemotedOffer[];
  /** Offers dropped because their region's quota cannot fit them (`quotaShortfalls`), and why (absent in older histories). */
  quotaSkipped?: (QuotaShortfall & { cloud: string })[];
  /** Quotas the pre-check could not read, whose offers were kept (absent in older histories). */
  quotaUnchecked?: QuotaNotes['unchecked'];
}

export interface AwaitRunningInput {
  at: Location;
  vmName: string;
  instanceId: string;
  /** Epoch ms of the create; a vanished instance is only "gone" after a grace period (eventual consistency). */
  createdAtMs: number;
}

export interface RunningInstance {
  instanceId: string;
  endpoint: SshEndpoint;
}

export interface ProbeInput {
  endpoint: SshEndpoint;
  /** Login user when the endpoint does not name one. */
  defaultUser: string;
  /** The key the VM was created with: a worker with another key fails at once (WorkerKeyMismatch). */
  workerKey?: WorkerKeyRef;
}

/** Delay between SSH probe tries within one attempt (sshd usually answers moments after Running). */
export const SSH_LOOK_DELAY_MS = 300;

/** Instance not seen for this long after create = vanished (covers list-after-create lag). */
export const VANISH_GRACE_MS = 30_000;

/** Offers across clouds: user's cloud order when given, else all offers by price (unknown price last). */
function orderOffers(perCloud: Offer[][], userOrdered: boolean): Offer[] {
  const all = perCloud.flat();
  if (userOrdered) return all;
  return all
    .map((o, i) => ({ o, i }))
    .sort((a, b) => (a.o.pricePerHour ?? Infinity) - (b.o.pricePerHour ?? Infinity) || a.i - b.i)
    .map((x) => x.o);
}

export function createActivities(deps: ActivityDeps) {
  // buildWorker runs a worker on each of these clouds' task queues (src/core/rate-limits.ts).
  return withServedClouds(activitiesOf(deps), deps.registry.names());
}

function activitiesOf(deps: ActivityDeps) {
  const prober = deps.prober ?? sshProber;
  const now = deps.now ?? Date.now;
  const provider = (cloud: string) => providerOf(deps.registry, cloud);
  const inline = deps.inlineWindowMs === undefined ? {} : { windowMs: deps.inlineWindowMs };

  /** One boot look: the running instance, or NotReady (boot-aware `nextRetryDelay`) / BootFailed. */
  const lookRunning = async (input: AwaitRunningInput): Promise<RunningInstance> => {
    const p = provider(input.at.cloud);
    const seen = await translated(() => p.observe(input.at, input.vmName));
    // Boot-aware polling: sparse before the cloud's typical boot time, dense around it (P3 in BENCHMARKS.md).
    const next = bootPollDelayMs(p.capabilities(), now() - input.createdAtMs);
    const inst = seen.find((o) => o.id === input.instanceId) ?? seen.find((o) => o.status === 'Running' || o.status === 'Pending');
    if (!inst) {
      if (now() - input.createdAtMs > VANISH_GRACE_MS) throw bootFailed(`instance ${input.instanceId} vanished while booting`);
      throw notReady(`instance ${input.instanceId} not listed yet`, next);
    }
    if (inst.status === 'Failed') throw bootFailed(`instance ${inst.id} failed while booting${inst.reason ? `: ${inst.reason}` : ''}`);
    if (inst.status === 'Terminating' || inst.status === 'Stopped' || inst.status === 'Stopping') {
      throw bootFailed(`instance ${inst.id} is ${inst.status} while booting${inst.reason ? `: ${inst.reason}` : ''}`);
    }
    if (inst.status !== 'Running' || !inst.endpoint)
      throw notReady(`instance ${inst.id} is ${inst.status}${inst.endpoint ? '' : ', no SSH endpoint yet'}`, next);
    return { instanceId: inst.id, endpoint: inst.endpoint };
  };

  /** One SSH probe: SshNotReady / SshAuthFailed (retryable) until it works; a failing command is final. */
  const probeOnce = async (input: ProbeInput): Promise<ProbeResult> => {
    const target = { host: input.endpoint.host, port: input.endpoint.port, user: input.endpoint.user ?? input.defaultUser };
    try {
      return await prober(target, deps.ssh, 10_000);
    } catch (err) {
      if (err instanceof SshError) throw sshFailure(err);
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof ProbeCommandError)
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.CommandFailed,
          message,
          nonRetryable: true,
          details: [{ kind: 'Failed' } satisfies FailureDetails],
        });
      // A timed-out `true`, or a test prober's plain error: not reachable yet.
      throw sshFailure(new SshError('unreachable', message));
    }
  };

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
    /** Every configured (or chosen) cloud's offers that match the request (`matchOffers`), ordered by preference. Creates nothing. */
    async planOffers(input: PlanInput): Promise<PlanOutput> {
      const clouds = input.clouds?.length ? input.clouds : defaultClouds(deps.registry);
      const perCloud: Offer[][] = [];
      const capabilities: Record<string, Capabilities> = {};
      const skipped: PlanOutput['skipped'] = [];
      const quota: QuotaNotes = { skipped: [], unchecked: [] };
      for (const cloud of clouds) {
        const p = provider(cloud);
        if (input.requireK8s && !p.capabilities().k8s) {
          skipped.push({ cloud, kind: 'InvalidRequest', message: `${cloud} cannot run k3s (use --no-k8s, or another cloud)` });
          continue;
        }
        const unfit = imageDiskProblem(cloud, p.capabilities(), input.request);
        if (unfit) {
          skipped.push({ cloud, kind: 'InvalidRequest', message: `${unfit.message} (${unfit.fix})` });
          activityLog('info', `${cloud} cannot honour ${unfit.flag}: skipped`, { cloud, flag: unfit.flag });
          continue;
        }
        try {
          const listed = await p.plan(input.request);
          // The one filter for every cloud: adapters list, the matcher judges.
          const matched = matchOffers(listed, input.request);
          const { dropped } = matched;
          const offers = input.listOnly ? matched.offers : await withinQuota(p, matched.offers, quota);
          if (offers.length > 0) capabilities[cloud] = p.capabilities();
          else if (matched.offers.length > 0)
            skipped.push({
              cloud,
              kind: 'Quota',
              message: quota.skipped
                .filter((q) => q.cloud === cloud)
                .map((q) => q.message)
                .join('; '),
            });
          else if (dropped.length > 0) skipped.push({ cloud, kind: 'InvalidRequest', message: explainNoMatch(input.request, dropped) });
          perCloud.push(offers);
        } catch (err) {
          // A cloud that cannot plan this request is skipped; a transient error is retried.
          if (err instanceof ProviderError && (err.kind !== 'Transient' || input.listOnly)) {
            skipped.push({ cloud, kind: err.kind, message: err.message });
            activityLog('info', `${cloud} cannot plan this request: skipped`, { cloud, kind: err.kind, error: err.message });
          } else throw toFailure(err);
        }
      }
      const ordered = orderOffers(perCloud, Boolean(input.clouds?.length));
      // Offers that answered Capacity lately go last (src/core/capacity-memory.ts says why not skipped).
      const memory = input.listOnly
        ? []
        : await readCapacityMemory({ ...(deps.capacityMemoryMs !== undefined ? { capacityMemoryMs: deps.capacityMemoryMs } : {}) });
      const { offers, demoted } = demoteRemembered(ordered, memory, now());
      if (offers.length === 0 && !input.listOnly) {
        const why = skipped.map((s) => `${s.cloud}: ${s.message}`).join('; ');
        throw toFailure(new ProviderError(noOffersKind(skipped), `no cloud can serve this request${why ? ` (${why})` : ''}`));
      }
      const tail = demoted.length > 0 ? `; ${demoted.length} tried last, out of capacity lately: ${demoted.map((d) => d.key).join(', ')}` : '';
      activityLog('info', `planned ${offers.length} offer(s)${tail}`, { offers: offers.length, clouds: Object.keys(capabilities), demoted: demoted.length });
      return {
        offers,
        capabilities,
        skipped,
        ...(demoted.length > 0 ? { demoted } : {}),
        ...(quota.skipped.length > 0 ? { quotaSkipped: quota.skipped } : {}),
        ...(quota.unchecked.length > 0 ? { quotaUnchecked: quota.unchecked } : {}),
      };
    },

    /** NotReady (retryable) until the instance is Running with an SSH endpoint. */
    async awaitRunning(input: AwaitRunningInput): Promise<RunningInstance> {
      const running = await lookAgain(() => lookRunning(input), inline);
      activityLog('info', 'instance running', { instanceId: running.instanceId, host: running.endpoint.host, port: running.endpoint.port });
      return running;
    },

    /** Connect with the worker's key and run `true`; SshNotReady (retryable) until it works. */
    async probeSsh(input: ProbeInput): Promise<ProbeResult> {
      requireWorkerKey(deps.ssh, input.workerKey);
      const probed = await lookAgain(() => probeOnce(input), { ...inline, defaultDelayMs: SSH_LOOK_DELAY_MS });
      activityLog('info', 'ssh answers', { host: input.endpoint.host, port: input.endpoint.port, hostKeyFingerprint: probed.fingerprint });
      return probed;
    },

    async observeVm(at: Location, vmName: string): Promise<Observed[]> {
      return translated(() => provider(at.cloud).observe(at, vmName));
    },
  });
  // The watcher's cycle heartbeats itself, every half its heartbeat timeout (a heartbeat is a billed
  // action on Temporal Cloud; a long-polling cycle heartbeating every 2 s would cost more than it saves).
  return { ...liveness, ...createWatcherActivities(deps) };
}

export type Activities = ReturnType<typeof activitiesOf>;
