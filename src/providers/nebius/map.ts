/**
 * Pure Nebius → gpuprov mapping: status table, endpoints, offers, labels, and the spot market.
 *
 * Preemptible (spot) VMs, as https://docs.nebius.com/compute/virtual-machines/preemptible and the
 * compute v1 descriptors of the `nebius` SDK (0.6.29, pinned in test/contract/requirements.txt) say:
 * - made by `spec.preemptible.on_preemption = STOP` (the only policy: "Compute stops the VM without
 *   deleting or restarting it"; `priority` is deprecated since 2026-05-11 and not sent), the
 *   `pricing_model` case `follows_spot_price` ("the preemptible VM accepts the current spot price";
 *   default `on_demand`) and `recovery_policy = FAIL`, as the docs' create example sets it;
 * - sold on the platforms whose `status.allowed_for_preemptibles` is true;
 * - priced by the billing calculator like a regular VM, asked with the preemptible fields: the
 *   spot price now (priceSource `api`);
 * - no bid: nothing answers "price too low"; no capacity is RESOURCE_EXHAUSTED/NotEnoughResources
 *   as for regular VMs (errors.ts: Capacity, offer scope, and the offer key carries `/spot`);
 * - reclaimed by a stop: SIGTERM inside the VM 60 s before, then STOPPING → STOPPED with its disks
 *   kept. The API has no preempted flag, notice or deadline; the mark is a preemptible instance
 *   STOPPING or STOPPED while `spec.stopped` (what a Stop call asks for) is still false (?). gpuprov
 *   never stops an instance, so the one other stopper is a person.
 */
import { deploymentHash } from '../deployment';
import { IDENTITY_TAG, OWNER_TAG, type InstanceStatus, type Observed, type Offer, type Preemption, type SshEndpoint } from '../../core/provider';
import type { Disk, Instance, Platform, PreemptibleFields } from './api';

/** Anything with Nebius resource metadata (instances, disks). */
type Labelled = { metadata: { labels: Record<string, string> } };

export const CLOUD = 'nebius';
/** Login user created by cloud-init on the Ubuntu images (dstack); root logins are blocked. */
export const SSH_USER = 'ubuntu';

/** `status.state` → normalised status. */
export const STATUS: Record<string, InstanceStatus> = {
  UNSPECIFIED: 'Pending',
  CREATING: 'Pending',
  UPDATING: 'Pending',
  STARTING: 'Pending',
  RUNNING: 'Running',
  STOPPING: 'Stopping',
  STOPPED: 'Stopped',
  DELETING: 'Terminating',
  ERROR: 'Failed',
};

export function mapStatus(state: string, reconciling: boolean): InstanceStatus {
  const s = STATUS[state] ?? 'Pending';
  // A fresh VM can report STOPPED with reconciling=true on its way to RUNNING (bellhop) (?).
  if (s === 'Stopped' && reconciling) return 'Pending';
  return s;
}

/** Label values follow the GCP rule (dstack): lower-case letters, digits, `_` and `-`, at most 63. */
export function labelValue(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^_\-a-z0-9]/g, '_')
    .slice(0, 63);
}

export function identityLabels(vmName: string, owner: string): Record<string, string> {
  return { [IDENTITY_TAG]: labelValue(vmName), [OWNER_TAG]: labelValue(owner) };
}

/** The resource carries this VM's identity and this deployment's owner label. */
export function hasIdentity(inst: Labelled, vmName: string, deployment: string): boolean {
  return inst.metadata.labels[IDENTITY_TAG] === labelValue(vmName) && inst.metadata.labels[OWNER_TAG] === labelValue(deployment);
}

/** The VM name on a resource that carries this deployment's identity labels, else undefined. */
export function vmNameOf(inst: Labelled, deployment: string): string | undefined {
  const vm = inst.metadata.labels[IDENTITY_TAG];
  return vm !== undefined && hasIdentity(inst, vm, deployment) ? vm : undefined;
}

/** Labelled by another deployment: never deleted, even by id. */
export function isForeign(inst: Labelled, deployment: string): boolean {
  const owner = inst.metadata.labels[OWNER_TAG];
  return owner !== undefined && owner !== labelValue(deployment);
}

/**
 * Instance names (unique per project): lower-case hostname-like `gpuprov-<vm>-<deployment hash>`,
 * the VM part cut so the whole stays within 63 characters.
 */
export function instanceName(vmName: string, deployment: string): string {
  const vm = `gpuprov-${vmName.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 56).replace(/-+$/, '');
  return `${vm}-${deploymentHash(deployment)}`;
}
export function diskName(vmName: string, deployment: string): string {
  return `${instanceName(vmName, deployment).slice(0, 58)}-boot`;
}

/**
 * The VM whose boot disk this is, in this deployment: labelled with its identity and our owner,
 * and named as `prepare` names it (a disk merely copied from ours keeps its labels, not its name).
 * A disk already DELETING is nobody's to sweep.
 */
export function vmNameOfDisk(disk: Disk, deployment: string): string | undefined {
  const vm = vmNameOf(disk, deployment);
  if (!vm || disk.metadata.name !== diskName(vm, deployment)) return undefined;
  return disk.status?.state === 'DELETING' ? undefined : vm;
}

/** Public IP of the first interface that has one; Nebius reports it CIDR-suffixed (`1.2.3.4/32`). */
export function endpointOf(inst: Instance): SshEndpoint | undefined {
  for (const nic of inst.status?.network_interfaces ?? []) {
    const addr = nic.public_ip_address?.address;
    if (addr) return { host: addr.split('/')[0]!, port: 22, user: SSH_USER };
  }
  return undefined;
}

/** The spec fields that make a VM preemptible, at create and at the calculator alike. */
export const PREEMPTIBLE: PreemptibleFields = { preemptible: { on_preemption: 'STOP' }, follows_spot_price: {}, recovery_policy: 'FAIL' };

/**
 * A preemptible instance Compute stopped (see the header): stopping or stopped, not asked to.
 * `seenAt` is the notice time (the API gives none); no deadline is published.
 */
export function preemptionOf(inst: Instance, status: InstanceStatus, seenAt: string): Preemption | undefined {
  if (!inst.spec?.preemptible || inst.spec.stopped || (status !== 'Stopping' && status !== 'Stopped')) return undefined;
  return { noticeAt: seenAt, detail: `${inst.status?.state ?? status} (preemptible, stopped by Compute)` };
}

/** `seenAt`: now, as the adapter looked (the notice time of a preemption found). */
export function toObserved(inst: Instance, region: string, seenAt: string): Observed {
  const state = inst.status?.state ?? 'UNSPECIFIED';
  const status = mapStatus(state, inst.status?.reconciling ?? false);
  const o: Observed = { id: inst.metadata.id, status, location: { cloud: CLOUD, region } };
  if (status !== 'Running') o.reason = state;
  const preemption = preemptionOf(inst, status, seenAt);
  if (preemption) o.preemption = preemption;
  const ep = status === 'Running' ? endpointOf(inst) : undefined;
  if (ep) o.endpoint = ep;
  const r = inst.spec?.resources;
  if (r?.platform) o.instanceType = instanceType(r.platform, r.preset);
  return o;
}

/** `gpu-h100-sxm` → `H100`; `cpu-d3` → undefined. */
export function gpuModel(platform: string): string | undefined {
  const m = /^gpu-([a-z0-9]+)/.exec(platform);
  return m ? m[1]!.toUpperCase() : undefined;
}

export function instanceType(platform: string, preset: string): string {
  return `${platform}:${preset}`;
}
export function splitInstanceType(t: string): { platform: string; preset: string } {
  const i = t.indexOf(':');
  return { platform: t.slice(0, i), preset: t.slice(i + 1) };
}

/** Public platforms live in `project-<region code>public-images` (region code = our project id's 3 chars). */
export function platformsParent(projectId: string): string {
  return `project-${projectId.slice('project-'.length, 'project-'.length + 3)}public-images`;
}

/** Every platform preset of one region as an offer, unpriced, in catalogue order. */
export function offersFor(platforms: Platform[], region: string): Offer[] {
  const out: Offer[] = [];
  for (const p of platforms) {
    const platform = p.metadata.name || p.metadata.id;
    const model = gpuModel(platform);
    for (const preset of p.spec?.presets ?? []) {
      const r = preset.resources;
      const gpus = r?.gpu_count ?? 0;
      const o: Offer = { cloud: CLOUD, region, instanceType: instanceType(platform, preset.name), currency: 'USD' };
      if (model && gpus > 0) o.gpu = { model, count: gpus };
      if (r?.vcpu_count) o.vcpus = r.vcpu_count;
      if (r?.memory_gibibytes) o.memoryGiB = r.memory_gibibytes;
      out.push(o);
    }
  }
  return out;
}

/** The platforms that take preemptible VMs (`status.allowed_for_preemptibles`), by name. */
export function spotPlatforms(platforms: Platform[]): Set<string> {
  return new Set(platforms.filter((p) => p.status?.allowed_for_preemptibles).map((p) => p.metadata.name || p.metadata.id));
}

/** The spot offer beside every offer whose platform takes preemptible VMs (unpriced). */
export function spotTwins(offers: Offer[], allowed: Set<string>): Offer[] {
  return offers.filter((o) => allowed.has(splitInstanceType(o.instanceType).platform)).map((o) => ({ ...o, market: 'spot' as const }));
}

/** One market's calculator answer: prices by instance type, or why there are none. */
export interface MarketPrices {
  prices: Map<string, number>;
  error?: string;
}

/**
 * Attach prices, cheapest first (unpriced last, stable); `planOffers` applies any price cap.
 * `pricedAt`: when the calculator answered. A spot offer takes the spot price and shows the
 * on-demand one beside it. Where a market's calculator failed its offers carry `extra.priceError`.
 */
export function priceAndOrder(offers: Offer[], pricedAt: string, onDemand: MarketPrices, spot?: MarketPrices): Offer[] {
  return offers
    .map((o) => {
      const market = o.market === 'spot' ? spot : onDemand;
      const p = market?.prices.get(o.instanceType);
      const beside = o.market === 'spot' ? onDemand.prices.get(o.instanceType) : undefined;
      if (p !== undefined)
        return { ...o, pricePerHour: p, ...(beside !== undefined ? { onDemandPricePerHour: beside } : {}), priceSource: 'api' as const, pricedAt };
      return market?.error ? { ...o, extra: { priceError: market.error } } : o;
    })
    .sort((a, b) => (a.pricePerHour ?? Infinity) - (b.pricePerHour ?? Infinity));
}
