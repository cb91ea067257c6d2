/**
 * The provider contract: the only seam between gpuprov and a cloud API.
 *
 * Every adapter lives in `src/providers/<cloud>/` and implements {@link CloudProvider}.
 * Adapters make one API call (plus pagination) per primitive, never wait, never retry:
 * waiting and retrying are Temporal's job (activity retry policies).
 * Errors leave an adapter only as {@link ProviderError} (see `src/core/errors.ts`).
 */
import type { BlockOffering, BlockQuery, ReservationInfo, ReservedAsk } from './reservation';

/** JSON value; driver-private data that is kept in workflow history must be plain JSON. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Where an instance lives. `zone` is set on clouds that place by zone (AWS subnet AZ, GCP zone). */
export interface Location {
  cloud: string;
  region: string;
  zone?: string;
}

/**
 * A GPU ask: `H100:1` is exactly one GPU, `H100:4+` at least four. `model` is upper-case
 * (`H100`, `A100-80GB`, `T4`) and matched by `src/core/gpu-names.ts`.
 */
export interface GpuRequest {
  model: string;
  count: number;
  /** `N+`: at least `count` GPUs. Absent (every history before it existed) or false: exactly `count`. */
  atLeast?: boolean;
}

/** What a user asks for; `plan` turns it into ordered offers. */
export interface ResourceRequest {
  vmName: string;
  /** No GPU: the cheapest CPU types the cloud lists (used by tests and the local cloud). */
  gpu?: GpuRequest;
  /** Restrict to these regions (empty/undefined: every configured region). */
  regions?: string[];
  /** Restrict to these instance types. */
  instanceTypes?: string[];
  /** Drop offers whose hourly price is above this (USD); under a cap an offer without a known price is dropped too. */
  maxPricePerHour?: number;
  /** The VM will run k3s; the plan may prefer images/types that support it. */
  k8s: boolean;
  /** `--image`: clouds whose capabilities cannot use it (or whose format it is not) are skipped by `planOffers`. */
  image?: string;
  /** `--disk-gb`: clouds that cannot size the disk, or not to this size, are skipped by `planOffers`. */
  diskGb?: number;
  /**
   * `--spot`: `only` — spot offers only; `auto` — spot first, then on-demand. Absent: on-demand
   * only. An adapter whose cloud sells spot lists its spot offers (`market: 'spot'`) when this is
   * set; `matchOffers` keeps the markets asked for.
   */
  spot?: SpotMode;
  /** `--reservation`, `--capacity-block`, `--queue` (src/core/reservation.ts); absent: no reserved capacity. */
  reserved?: ReservedAsk;
}

/** See {@link ResourceRequest.spot}. */
export type SpotMode = 'only' | 'auto';

/** See {@link Offer.priceSource}. */
export type PriceSource = 'api' | 'catalog';

/** How a VM is paid for (`Offer.market`; a cloud's row in src/core/clouds.ts lists those it sells). */
export type Market = 'on-demand' | 'spot' | 'reserved';

/** One concrete place to try: cloud × region (× zone) × instance type, with its price when known. */
export interface Offer {
  cloud: string;
  region: string;
  zone?: string;
  instanceType: string;
  gpu?: { model: string; count: number; memoryGiB?: number };
  vcpus?: number;
  memoryGiB?: number;
  /** Hourly price, when the cloud publishes one: on a spot offer, the spot price charged now. */
  pricePerHour?: number;
  /** On a spot offer: the on-demand hourly price of the same type and place, shown beside it (absent when unknown). */
  onDemandPricePerHour?: number;
  currency?: string;
  /**
   * Where `pricePerHour` came from: `api` — read from the vendor's API (or its price list) at
   * `pricedAt`; `catalog` — a literal table in gpuprov, `pricedAt` being the date it was read.
   * Absent when there is no price (and on offers recorded before these fields existed).
   */
  priceSource?: PriceSource;
  /** ISO 8601 time (`api`) or date (`catalog`, e.g. `2025-06-01`) the price was read. */
  pricedAt?: string;
  spot?: boolean;
  /**
   * How it is paid for; absent: on-demand (every offer recorded before markets existed). Part of
   * the offer and capacity-memory keys, so a spot answer never blocks or demotes the on-demand offer.
   */
  market?: Market;
  /** On a `reserved` offer: the reservation (or bought block) it launches into, targeted. */
  reservation?: ReservationInfo;
  /** A queued request (GCP flex-start): placed once, waited on up to the ask's `waitMs`. */
  queued?: boolean;
  /** Adapter-private plan data (image id, vendor offer id); plain JSON, kept in history. */
  extra?: Json;
}

/** A boot-time script: rendered to cloud-init user-data by `renderCloudInit`, or run by the cloud's own hook. */
export interface BootScript {
  script: string;
  env: Record<string, string>;
}

/** Everything `prepare`/`create` need about the VM beyond the offer. Contains no secrets. */
export interface InstanceSpec {
  vmName: string;
  /** The owning deployment (Temporal namespace); tagged on every resource with the VM name. */
  owner: string;
  /** OpenSSH public keys allowed to log in (the worker's key first, then the users'). */
  publicKeys: string[];
  bootScript?: BootScript;
  /** Stable per launch attempt (`<workflowId>/<runId>/<attempt index>`, built by the launch): a retried create must not make a second instance. */
  idempotencyKey: string;
  /** Inbound TCP ports to open (22 always; 6443 when k3s is reached directly). */
  openPorts: number[];
  /** The user's image (`--image`), in the form the cloud's `Capabilities.image` names; absent: the adapter's default. */
  image?: string;
  /** Boot (or container) disk size in GB (`--disk-gb`), within `Capabilities.diskGb`; absent: the adapter's default. */
  diskGb?: number;
  /**
   * Instances of this VM name the create runs beside: a preempted instance a `--recover`
   * replacement replaces (src/core/recovery.ts). Never adopted, never a reason to refuse the name.
   */
  besides?: string[];
}

/**
 * What `--image` names on a cloud: `ami` an AMI id; `gcp-image` a GCP image family or image
 * (`projects/P/global/images/family/F`, `projects/P/global/images/NAME`); `vendor-image` the
 * cloud's own image name, slug, family or id; `container` a container image reference.
 */
export type ImageKind = 'ami' | 'gcp-image' | 'vendor-image' | 'container';

/** How a cloud takes `--image`: its kind and the written form it accepts (plain JSON: kept in history). */
export interface ImageSupport {
  kind: ImageKind;
  /** A regular expression (source, anchored) every accepted value matches. */
  pattern: string;
  /** The form, for messages: `an AMI id (ami- and 8 or 17 hex digits)`. */
  format: string;
  example: string;
}

export type InstanceStatus = 'Pending' | 'Running' | 'Stopping' | 'Stopped' | 'Terminating' | 'Failed';

/** How to reach an instance over SSH; `user` when the cloud dictates it. */
export interface SshEndpoint {
  host: string;
  port: number;
  user?: string;
}

/** A non-terminated instance carrying the VM's identity, normalised. */
export interface Observed {
  id: string;
  status: InstanceStatus;
  /** Vendor's words for Failed (or any state), for humans. */
  reason?: string;
  /** Known once the instance is Running and reachable. */
  endpoint?: SshEndpoint;
  location: Location;
  instanceType?: string;
  /**
   * `createKeyOf` (src/providers/create-key.ts) of the idempotency key the instance was created with, where the cloud keeps
   * one on it (a tag, a label, a record): the create's positive evidence that it made this
   * instance. Absent on clouds that keep none.
   */
  createKey?: string;
  /** The cloud has announced it will reclaim this (spot) instance, which may still run: see {@link Preemption}. */
  preemption?: Preemption;
}

/**
 * A spot instance's reclaim as the cloud's API exposes it (AWS spot request status
 * `marked-for-termination` or an instance-action, GCP's preempted status, a marketplace's outbid
 * state). Plain JSON: it reaches history in the `preempted` loss cause.
 */
export interface Preemption {
  /** ISO 8601: when the cloud announced it (first seen, where the cloud gives no time). */
  noticeAt: string;
  /** ISO 8601: when the cloud will stop or delete the instance, where it says. */
  deadline?: string;
  /** The cloud's words (`marked-for-termination`, `TERMINATED (preempted)`), for people. */
  detail?: string;
}

/** An instance found by {@link CloudProvider.inventory}: what `observe` reports, plus whose it is. */
export interface Owned extends Observed {
  /** The VM name from the instance's identity tag (or name). */
  vmName: string;
}

/**
 * A per-VM side resource of this deployment found by {@link CloudProvider.sideInventory}: a
 * security group, firewall, key, volume or script that `prepare` made and `cleanup` deletes.
 */
export interface SideResource {
  /** The VM name from the resource's identity tag (or name). */
  vmName: string;
  /** What it is at the cloud (`security-group`, `firewall`, …), for logs and the sweep record. */
  kind: string;
  /** The cloud's id or name of it. */
  id: string;
}

/** What an adapter can and cannot do; the workflows read it, they never branch on the cloud's name. */
export interface Capabilities {
  /** Runs a boot script (cloud-init or a vendor hook) at first boot. */
  bootScript: boolean;
  /** Can open inbound ports per VM (so the k3s API can be reached directly on 6443). */
  openPorts: boolean;
  /** Can run k3s at all (false for containers: local, Docker, RunPod, Vast.ai). */
  k8s: boolean;
  /** Login user: fixed by the image, or chosen by the cloud and reported in the endpoint. */
  sshUser: { kind: 'fixed'; user: string } | { kind: 'provider' };
  /** Upper bound from create to Running with an endpoint. */
  bootTimeoutMs: number;
  /** How often to observe while waiting (the activity retry interval). */
  pollIntervalMs: number;
  /** Typical create-to-running time, to shape polling (fast first, then backing off). */
  typicalBootMs: number;
  /** `--image`: what the cloud accepts, or false when the image is fixed (absent in histories before it existed). */
  image?: ImageSupport | false;
  /** `--disk-gb`: the sizes (GB) the boot or container disk can take, or false when the type fixes it. */
  diskGb?: { min: number; max: number } | false;
  /** What the cloud sells (its row's `markets`, src/core/clouds.ts); absent: on-demand only (src/core/markets.ts). */
  markets?: readonly Market[];
}

/** An offer a quota cannot fit: `instanceType` in `region` (every zone), and the quota's numbers. */
export interface QuotaShortfall {
  region: string;
  instanceType: string;
  message: string;
}

/** A quota the pre-check could not read (denied, no such quota, no answer): its offers stay in the plan, which says so. */
export interface QuotaUnknown {
  unknown: true;
  region: string;
  message: string;
}

/**
 * The adapter contract. Every method is idempotent or read-only, makes no loops beyond
 * one call's pagination, and throws only `ProviderError`.
 */
export interface CloudProvider {
  readonly name: string;
  capabilities(): Capabilities;
  /**
   * The cloud's offers in its order of preference (first = preferred). Creates nothing. The request
   * may narrow the vendor query (regions, GPU count), but `matchOffers` (src/core/offer-match.ts),
   * applied by `planOffers`, is the judge of GPU, count, price, region and type: offers that do not
   * match may be returned. A request the cloud can never serve (no GPUs at all) → InvalidRequest.
   */
  plan(req: ResourceRequest): Promise<Offer[]>;
  /**
   * Optional quota pre-check (clouds that publish quotas: AWS Service Quotas, GCP regional quotas):
   * the offers whose region's quota cannot fit one instance, with why. `planOffers` drops them
   * without an attempt. Read-only; a check that fails is ignored (the attempt finds out instead):
   * wholly (it throws) or in part (a `QuotaUnknown` per quota not read; those offers are kept).
   */
  quotaShortfalls?(offers: readonly Offer[]): Promise<(QuotaShortfall | QuotaUnknown)[]>;
  /** Idempotent prerequisites (security group, key pair, startup script…); returns driver-private JSON. */
  prepare(offer: Offer, spec: InstanceSpec): Promise<Json>;
  /** One create attempt labelled with the VM identity; returns the instance id; never waits. */
  create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string>;
  /**
   * Optional: finish a create that stopped half-way (a worker killed between a Docker container's
   * create and its start), so an adopted instance boots now instead of waiting out the boot
   * timeout. Create-or-adopt calls it on every instance it adopts. Idempotent (an instance already
   * booting or running is left alone); no waiting; a refusal is a classified ProviderError.
   */
  resumeCreate?(at: Location, vmName: string, id: string): Promise<void>;
  /** Non-terminated instances with this VM's identity at `at`, normalised. */
  observe(at: Location, vmName: string): Promise<Observed[]>;
  /**
   * Delete these instances and any others with the identity at `at`; unknown or gone ids succeed. No waiting.
   * `exact`: delete only `ids` (this deployment's), nothing found by identity; a release passes it
   * to spare an instance another create made under the same name (src/core/release-scope.ts).
   * Every adapter whose `observe` reports `createKey` honours it; the others are never passed it.
   */
  delete(at: Location, vmName: string, ids: string[], exact?: boolean): Promise<void>;
  /** Delete per-VM side resources created by `prepare`; idempotent. */
  cleanup(at: Location, vmName: string): Promise<void>;
  /**
   * Every non-terminated instance of this adapter's deployment in one region (`at.zone` unset:
   * all its zones), in one list call plus pagination; the account watcher's one view per cycle.
   * Instances of other deployments are never returned.
   */
  inventory(at: Location): Promise<Owned[]>;
  /**
   * Optional: this deployment's per-VM side resources visible from one region (a cloud's global
   * ones, GCP firewalls, are listed for every region), in a few list calls. The account watcher
   * calls a VM name with side resources but no instance and no open workflow an orphan too, and
   * sweeps it with `cleanup`. Resources of other deployments are never returned.
   */
  sideInventory?(at: Location): Promise<SideResource[]>;
  /** Optional (clouds that sell capacity blocks): the blocks on offer for the query; read-only. */
  blockOfferings?(q: BlockQuery): Promise<BlockOffering[]>;
  /**
   * Optional: buy a block offering (billed at once). Idempotent by `idempotencyKey`: a retry
   * returns the block already bought. Returns the reservation to launch into.
   */
  buyBlock?(offering: BlockOffering, idempotencyKey: string): Promise<ReservationInfo>;
}

/** The label/tag key every resource carries, with the VM name as value. */
export const IDENTITY_TAG = 'gpuprov-vm-name';
/** The label/tag key naming the owning deployment (Temporal namespace). */
export const OWNER_TAG = 'gpuprov-owner';

/** Name used where a cloud has no tags/labels. */
export function identityName(vmName: string): string {
  return `gpuprov-${vmName}`;
}
