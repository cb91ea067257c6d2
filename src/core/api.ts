/**
 * The public, versioned workflow API: names, inputs, outputs, signals, queries and updates.
 * Other services (any SDK language) start these workflows by name with these JSON shapes.
 * Both the client and the workflows import this module; it holds no logic.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CapacityEntry } from './capacity-memory';
import type { DeploymentRecord } from './deployment-record';
import type { BlockScope } from './errors';
import type { AttemptKind } from './failures';
import type { LossCause } from './loss';
import type { GpuRequest, Location, Offer, SpotMode, SshEndpoint } from './provider';
import type { ReservedAsk, ReservedState } from './reservation';

export const API_VERSION = 1;
export const TASK_QUEUE = 'gpuprov';

export const vmWorkflowId = (name: string): string => `vm-${name}`;

/** Search attributes (Keyword) registered on the server and upserted by `vmWorkflow`. */
export const SEARCH_ATTRIBUTES = ['GpuprovVmName', 'GpuprovStage', 'GpuprovCloud', 'GpuprovRegion', 'GpuprovInstanceType'] as const;
export type SearchAttributeName = (typeof SEARCH_ATTRIBUTES)[number];

/** Whether the VM runs k3s: `auto` = where the cloud supports it. */
export type K8sMode = 'auto' | 'on' | 'off';

/** Input of `vmWorkflow` / `launchWorkflow` (the CLI's `start` options). */
export interface VmSpec {
  name: string;
  gpu?: GpuRequest;
  /** Clouds to try, in preference order (default: every configured cloud). */
  clouds?: string[];
  regions?: string[];
  instanceTypes?: string[];
  maxPricePerHour?: number;
  /** Auto-down after this long in Ready. */
  ttlMs?: number;
  /** When every offer is exhausted, re-plan after a durable timer instead of failing. */
  retryUntilUp?: boolean;
  k8s?: K8sMode;
  /** Users' OpenSSH public keys (never private keys). */
  publicKeys?: string[];
  /** The boot image (AMI id, image family, container image…: see src/core/image-disk.ts); absent: each cloud's default. */
  image?: string;
  /** Boot (or container) disk size in GB; absent: each cloud's default. */
  diskGb?: number;
  /** Tear the VM down when its spend so far (src/core/spend.ts) reaches this many USD; a warning at 80 %. */
  budgetUsd?: number;
  /** Offers in flight at once (src/core/hedge.ts); absent: 1, one after another. */
  parallel?: number;
  /** `--spot`: `only` spot offers, or `auto` spot first then on-demand (src/core/offer-match.ts); absent: on-demand only. */
  spot?: SpotMode;
  /** `--recover`: a lost VM is torn down and launched again under the same name (src/core/recovery.ts); not for fleet slots (a spot slot replaces a preempted instance without it). */
  recover?: boolean;
  /**
   * `--reservation ID` / `--capacity-block OFFERING --yes` / `--queue [--wait D]`
   * (src/core/reservation.ts); absent: no reserved capacity.
   */
  reserved?: ReservedAsk;
}

export type Stage =
  | 'pending'
  | 'planning'
  | 'preparing'
  | 'creating'
  | 'booting'
  | 'connecting'
  | 'compensating'
  | 'waiting-retry'
  /** Waiting for a reservation's or capacity block's window to open (`VmStatus.reserved.wait`). */
  | 'waiting-window'
  | 'k8s'
  | 'ready'
  | 'k8s-failed'
  | 'tearing-down'
  | 'leaked'
  | 'lost'
  | 'failed'
  | 'cancelled'
  | 'terminated';

/** Stages after which the workflow has ended. */
export const TERMINAL_STAGES: readonly Stage[] = ['failed', 'cancelled', 'terminated'];

export type AttemptOutcome = 'ready' | 'failed' | 'unavailable' | 'cancelled';

/** One try of one offer. */
export interface AttemptRecord {
  index: number;
  offer: Offer;
  outcome: AttemptOutcome;
  /** The phase that failed: prepare, create, boot, connect. */
  phase?: 'prepare' | 'create' | 'boot' | 'connect';
  kind?: AttemptKind;
  message?: string;
  instanceIds: string[];
  /** True once a teardown of this attempt finished. */
  compensated: boolean;
  /** The create activity released its refused create itself (no compensation step: src/activities/attempt.ts). */
  releasedByCreate?: true;
  startedAt: string;
  /** For a failed attempt, set again once its compensation finished (the instance is gone). */
  endedAt: string;
  /** Workflow time of the create call (billing starts); absent in older histories and when nothing was created. */
  createdAt?: string;
  /** What this failure blocked for the rest of the planning round (absent: nothing; older histories). */
  blocked?: BlockScope;
}

/** Result of a successful launch. */
export interface LaunchResult {
  offer: Offer;
  location: Location;
  instanceId: string;
  endpoint: SshEndpoint;
  /** `SHA256:…` of the host key seen by the worker's SSH probe (pin it in known_hosts). */
  hostKeyFingerprint: string;
  /** The host key itself (`ssh-ed25519 AAAA…`), public. */
  hostKey: string;
  /** `SHA256:…` of the worker (deployment) SSH key the VM was created with; absent before this field existed. */
  workerKeyFingerprint?: string;
  /** The idempotency key of the create that made `instanceId`: its teardown spares another create's instance of the name (absent before the field). */
  createdBy?: string;
  attempts: AttemptRecord[];
}

/** The details of a launch that failed after every offer. */
export interface LaunchFailureDetails {
  reason: 'exhausted' | 'fatal' | 'cancelled' | 'no-offers';
  attempts: AttemptRecord[];
}

export interface LeakInfo {
  location: Location;
  instanceIds: string[];
  since: string;
  tries: number;
  lastError: string;
  nextRetryAt?: string;
}

/** Re-run the k3s step of a VM in stage `k8s-failed` (what `provision start` does for such a VM). */
export const retryK8sSignal = defineSignal('retryK8s');

/** The k3s part of a VM's status. */
export interface K8sStatus {
  enabled: boolean;
  note?: string;
  /** How the API is reached: port 6443 opened on the VM, or an SSH tunnel (`provision tunnel`). */
  access?: 'Direct' | 'SshTunnel';
  apiPort?: number;
  /** Boot-probe route taken: `boot` (installed at boot) or why the installer was pushed. */
  route?: string;
  /** Installer pushes over SSH (including a SAN re-run). */
  pushes?: number;
}

/** Full snapshot returned by the `status` query. */
export interface VmStatus {
  apiVersion: number;
  name: string;
  stage: Stage;
  spec: VmSpec;
  offer?: Offer;
  location?: Location;
  instanceIds: string[];
  endpoint?: SshEndpoint;
  hostKeyFingerprint?: string;
  hostKey?: string;
  /** `SHA256:…` of the worker (deployment) SSH key the VM trusts: every worker must have this key. */
  workerKeyFingerprint?: string;
  /** The idempotency key of the create that made the instance it holds (`LaunchResult.createdBy`). */
  createdBy?: string;
  attempts: AttemptRecord[];
  createdAt: string;
  readyAt?: string;
  endedAt?: string;
  ttlExpiresAt?: string;
  leak?: LeakInfo;
  k8s?: K8sStatus;
  error?: { kind: string; message: string };
  /** `--budget`: when 80 % was reached (a warning) and when 100 % was (the VM is torn down). */
  budget?: { usd: number; warnedAt?: string; reachedAt?: string };
  /** `--recover`: the losses so far and the relaunches they caused (absent until the first loss). */
  recovered?: RecoveryRecord;
  /** Why the VM was lost (stage `lost`; absent before, and in statuses from before it). */
  lossCause?: LossCause;
  /** A `--recover` replacement's run: the preempted instance it replaces, still up until it is deleted (src/core/recovery.ts). */
  retiring?: RetiringInstance;
  /** `--reservation`, `--capacity-block`, `--queue`: what was used, bought and waited for (absent without). */
  reserved?: ReservedState;
}

/**
 * The preempted instance a replacement launch runs beside (src/core/recovery.ts, row `replace`):
 * deleted when the replacement is Ready or at `deadline`, whichever comes first; billed meanwhile.
 */
export interface RetiringInstance {
  location: Location;
  instanceIds: string[];
  /** The idempotency key of its create: its deletion spares the replacement (same name). */
  createdBy: string;
  /** Its offer (price, market): billed until `goneAt`, remembered by the capacity memory. */
  offer: Offer;
  /** ISO: when the cloud reclaims it. */
  deadline: string;
  /** ISO: from when its bill is this run's (the earlier runs' spend ends there, `RecoveryRecord.spentUsd`). */
  since: string;
  /** Its endpoint and host key: `ssh NAME` reaches it until the replacement is Ready. */
  endpoint?: SshEndpoint;
  hostKey?: string;
  /** ISO: when its deletion finished. */
  goneAt?: string;
}

/** What `--recover` carries from a lost run to the relaunch (continue-as-new), and shows in the status. */
export interface RecoveryRecord {
  /** Relaunches so far. */
  count: number;
  /** When the last loss was noticed. */
  lastLostAt: string;
  /** Why, for people (`lossMessage` of `lastCause`): the account watcher's words, or the backstop health check's. */
  lastReason: string;
  /** Why, structured (absent in records from before it). */
  lastCause?: LossCause;
  /** USD spent by the runs before this one, so `--budget` counts across recoveries. */
  spentUsd: number;
  /** Set when a loss was not recovered (the bound reached, the budget spent, a teardown asked): why. */
  gaveUp?: string;
  /** ISO times of the recent `preempted` losses (within `Tuning.spotAutoWindowMs`; absent: none). */
  preemptions?: string[];
  /** `spot: 'auto'` preempted too often: this run asks on-demand only (src/core/recovery.ts). */
  onDemand?: boolean;
}

/** Tear the VM down (also retries a leaked teardown at once). */
export const teardownSignal = defineSignal('teardown');
/** Stop a launch in flight; compensates what it created, then ends `cancelled`. */
export const cancelSignal = defineSignal('cancel');
/** Full snapshot of the VM. */
export const statusQuery = defineQuery<VmStatus>('status');

/**
 * What the account watcher saw: the VM's instance vanished or failed (it moves the VM to `lost`).
 * Read with `causeOfSignal` (src/core/loss.ts): signals sent before `cause` carry only `reason`.
 */
export interface InstanceLost {
  /** The instances the cloud still lists for the VM (Failed, Stopped…); empty when it lists none. */
  instanceIds: string[];
  cause?: LossCause;
  /** The same for people (`lossMessage(cause)`); the only why in signals from before `cause`. */
  reason?: string;
}
/** Sent by the account watcher to a Ready VM whose instance is gone or failed. */
export const instanceLostSignal = defineSignal<[InstanceLost]>('instanceLost');

/** Capacity memory (src/workflows/capacity-memory.ts): an offer answered Capacity; remember it until `untilMs`. */
export const rememberCapacitySignal = defineSignal<[CapacityEntry]>('rememberCapacity');
/** Capacity memory: the entries whose window has not ended. */
export const capacityMemoryQuery = defineQuery<CapacityEntry[]>('capacityMemory');

/** The deployment record of a task queue's workers (src/workflows/deployment-record.ts; its memo holds the same). */
export const deploymentRecordQuery = defineQuery<DeploymentRecord>('deploymentRecord');
