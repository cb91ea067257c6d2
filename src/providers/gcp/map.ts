/**
 * Pure GCP ↔ gpuprov mapping: names, labels, request ids, offers, the instance body,
 * and the literal status table.
 *
 * Spot (https://cloud.google.com/compute/docs/instances/create-use-spot): a Spot VM is an insert
 * with `scheduling.provisioningModel: 'SPOT'` (the Discovery document's `Scheduling`); host
 * maintenance must be `TERMINATE` and `automaticRestart` false (a Spot VM cannot restart itself).
 * `instanceTerminationAction: 'DELETE'`: a reclaimed VM is deleted with its auto-delete boot disk,
 * so it bills nothing afterwards (`STOP`, Google's default, keeps the disk and bills it). Spot
 * capacity counts against the `PREEMPTIBLE_` GPU quotas ({@link gpuQuotaMetric}).
 */
import { createHash } from 'node:crypto';
import { ProviderError } from '../../core/errors';
import { renderCloudInit } from '../cloud-init';
import { IDENTITY_TAG, OWNER_TAG } from '../../core/provider';
import { ownedName } from '../deployment';
import type { InstanceSpec, InstanceStatus, Location, Observed, Offer, QuotaShortfall } from '../../core/provider';
import { PRICE_DATE, type CatalogEntry } from './catalog';
import type { PriceLookup } from '../price-cache';
import { spotPriceKey } from './pricing';
import type { GcpInstance, GcpQuota } from './api';

export const CLOUD = 'gcp';
export const SSH_USER = 'ubuntu';

/** Compute `Instance.status` → normalised status. `TERMINATED` means stopped, not deleted. */
export const STATUS: Record<string, InstanceStatus> = {
  PROVISIONING: 'Pending',
  STAGING: 'Pending',
  PENDING: 'Pending', // a flex-start VM waiting for capacity (./flex-start.ts)
  PENDING_STOP: 'Stopping', // a graceful shutdown before STOPPING
  RUNNING: 'Running',
  STOPPING: 'Stopping',
  SUSPENDING: 'Stopping',
  STOPPED: 'Stopped',
  SUSPENDED: 'Stopped',
  TERMINATED: 'Stopped',
  REPAIRING: 'Pending',
  DEPROVISIONING: 'Terminating',
};

const RESOURCE_NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The instance, firewall and network-tag name: `gpuprov-<vm>-<deployment hash>` (names are unique
 * per zone/project, so two deployments' `gpu1` need two), a valid Compute resource name or InvalidRequest.
 */
export function resourceName(vmName: string, deployment: string): string {
  const name = ownedName(vmName, deployment);
  if (!RESOURCE_NAME.test(name)) {
    throw new ProviderError('InvalidRequest', `gcp: "${name}" is not a valid Compute resource name (lowercase letters, digits, '-', at most 63 characters)`);
  }
  return name;
}

/** A label value: lowercase, `[a-z0-9_-]`, at most 63 characters. */
export function labelValue(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-')
    .slice(0, 63);
}

/** The Compute list filter that selects this VM's instances (every deployment's: the owner label is matched client-side). */
export function identityFilter(vmName: string): string {
  return `labels.${IDENTITY_TAG} = "${labelValue(vmName)}"`;
}

/** The Compute list filter that selects one deployment's instances. */
export function ownerFilter(deployment: string): string {
  return `labels.${OWNER_TAG} = "${labelValue(deployment)}"`;
}

/**
 * A deterministic insert `requestId`: a version-4-shaped UUID from sha256(idempotencyKey),
 * so a retried create is recognised by Compute. Never all zeros (the variant bits are set).
 */
export function requestIdFor(idempotencyKey: string): string {
  const b = createHash('sha256').update(`gpuprov-gcp/${idempotencyKey}`).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Last path segment of a Compute URL (`.../zones/us-central1-a` → `us-central1-a`). */
export function lastSegment(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

/** The zone an offer or location names (GCP places instances by zone), or InvalidRequest. */
export function zoneOf(at: { zone?: string | undefined }): string {
  if (!at.zone) throw new ProviderError('InvalidRequest', 'gcp: a zone is required (GCP places instances by zone)');
  return at.zone;
}

/** `us-central1-a` → `us-central1`. */
export function regionOfZone(zone: string): string {
  return zone.replace(/-[a-z]$/, '');
}

/**
 * One offer per (rung × zone), in `entries` order, then zone name; priced from `live` (the Billing
 * Catalog, by region) where it has the rung, else from the dated ladder. With `spot`, each is
 * followed by its spot twin where the catalog has the rung's spot price (there is no dated spot
 * table: a spot offer always carries a live price, with the on-demand one beside it).
 */
export function toOffers(entries: CatalogEntry[], zonesFor: (e: CatalogEntry) => string[], live?: PriceLookup, spot = false): Offer[] {
  const offers: Offer[] = [];
  for (const e of entries) {
    for (const zone of [...zonesFor(e)].sort()) {
      const p = live?.(regionOfZone(zone), e.machineType);
      const onDemand = onDemandOffer(e, zone, p);
      offers.push(onDemand);
      const s = spot ? live?.(regionOfZone(zone), spotPriceKey(e.machineType)) : undefined;
      if (s) {
        offers.push({
          ...onDemand,
          pricePerHour: s.pricePerHour,
          onDemandPricePerHour: onDemand.pricePerHour!,
          priceSource: 'api',
          pricedAt: s.pricedAt,
          spot: true,
          market: 'spot',
        });
      }
    }
  }
  return offers;
}

/** The rung's on-demand offer in `zone`, priced live (`p`) or from the dated ladder. */
function onDemandOffer(e: CatalogEntry, zone: string, p: ReturnType<PriceLookup>): Offer {
  return {
    cloud: CLOUD,
    region: regionOfZone(zone),
    zone,
    instanceType: e.machineType,
    ...(e.gpuModel === undefined
      ? {}
      : { gpu: { model: e.gpuModel, count: e.gpuCount, ...(e.gpuMemoryGiB === undefined ? {} : { memoryGiB: e.gpuMemoryGiB }) } }),
    vcpus: e.vcpus,
    memoryGiB: e.memoryGiB,
    ...(p
      ? { pricePerHour: p.pricePerHour, priceSource: 'api', pricedAt: p.pricedAt }
      : { pricePerHour: e.pricePerHour, priceSource: 'catalog', pricedAt: PRICE_DATE }),
    currency: 'USD',
    spot: false,
    extra: {
      ...(e.attachAccelerator && e.acceleratorType ? { acceleratorType: e.acceleratorType, acceleratorCount: e.gpuCount } : {}),
    },
  };
}

/** What `prepare` hands to `create` (kept in history). */
export interface Prepared {
  [key: string]: string;
  firewall: string;
  networkTag: string;
  network: string;
  image: string;
}

/** The `instances.insert` body for this offer and VM. */
export function instanceBody(project: string, offer: Offer, prepared: Prepared, spec: InstanceSpec, deployment: string): Record<string, unknown> {
  const zone = offer.zone ?? '';
  const extra = (offer.extra ?? {}) as { acceleratorType?: string; acceleratorCount?: number };
  const accelerators = extra.acceleratorType
    ? [{ acceleratorType: `projects/${project}/zones/${zone}/acceleratorTypes/${extra.acceleratorType}`, acceleratorCount: extra.acceleratorCount ?? 1 }]
    : [];
  return {
    name: resourceName(spec.vmName, deployment),
    machineType: `zones/${zone}/machineTypes/${offer.instanceType}`,
    labels: { [IDENTITY_TAG]: labelValue(spec.vmName), [OWNER_TAG]: labelValue(deployment) },
    tags: { items: [prepared.networkTag] },
    disks: [{ boot: true, autoDelete: true, initializeParams: { sourceImage: prepared.image, diskSizeGb: String(spec.diskGb ?? (offer.gpu ? 200 : 20)) } }],
    networkInterfaces: [{ network: prepared.network, accessConfigs: [{ type: 'ONE_TO_ONE_NAT', name: 'External NAT' }] }],
    metadata: {
      items: [
        { key: 'ssh-keys', value: spec.publicKeys.map((k) => `${SSH_USER}:${k.trim()}`).join('\n') },
        { key: 'user-data', value: renderCloudInit(spec.bootScript) },
        // Deep Learning VM images install the driver at first boot if the family lacks one.
        ...(offer.gpu ? [{ key: 'install-nvidia-driver', value: 'True' }] : []),
      ],
    },
    scheduling: schedulingOf(offer),
    ...(accelerators.length ? { guestAccelerators: accelerators } : {}),
  };
}

/** The insert's `scheduling`: spot (see the header), else GPU VMs stop for host maintenance (they cannot live-migrate). */
export function schedulingOf(offer: Offer): Record<string, unknown> {
  if (offer.market === 'spot')
    return { provisioningModel: 'SPOT', instanceTerminationAction: 'DELETE', onHostMaintenance: 'TERMINATE', automaticRestart: false };
  return offer.gpu ? { onHostMaintenance: 'TERMINATE', automaticRestart: true } : { onHostMaintenance: 'MIGRATE', automaticRestart: true };
}

/** A listed instance → Observed (an endpoint only once Running with a NAT IP). */
export function toObserved(inst: GcpInstance, at: Location): Observed {
  const status = STATUS[inst.status] ?? 'Pending';
  const natIP = inst.networkInterfaces?.[0]?.accessConfigs?.[0]?.natIP;
  const zone = inst.zone ? lastSegment(inst.zone) : at.zone;
  return {
    id: inst.id,
    status,
    reason: inst.statusMessage ? `${inst.status}: ${inst.statusMessage}` : inst.status,
    ...(status === 'Running' && natIP ? { endpoint: { host: natIP, port: 22, user: SSH_USER } } : {}),
    location: { cloud: CLOUD, region: at.region, ...(zone ? { zone } : {}) },
    ...(inst.machineType ? { instanceType: lastSegment(inst.machineType) } : {}),
  };
}

/**
 * GPU model (src/core/gpu-names.ts) → Compute Engine's regional quota metric. Spot (preemptible)
 * capacity counts against the PREEMPTIBLE_ twin. https://cloud.google.com/compute/resource-usage#gpu_quota
 */
const GPU_QUOTA_METRIC: Record<string, string> = {
  T4: 'NVIDIA_T4_GPUS',
  L4: 'NVIDIA_L4_GPUS',
  V100: 'NVIDIA_V100_GPUS',
  P100: 'NVIDIA_P100_GPUS',
  A100: 'NVIDIA_A100_GPUS',
  'A100-80GB': 'NVIDIA_A100_80GB_GPUS',
  H100: 'NVIDIA_H100_GPUS', // the a3 types' 80 GB H100s count here
  'H100-80GB': 'NVIDIA_H100_GPUS',
};

export function gpuQuotaMetric(model: string, spot = false): string | undefined {
  const m = GPU_QUOTA_METRIC[model.toUpperCase()];
  return m && spot ? `PREEMPTIBLE_${m}` : m;
}

/**
 * GPU offers whose region's quota (limit − usage) cannot fit their GPU count; quotas not listed are
 * not judged. A spot or queued (flex-start) offer counts against the PREEMPTIBLE_ quota; a reserved one is not judged. A shortfall names a region and
 * type, so it drops that type's offers of both markets: it is reported only when every market
 * planned there falls short (spot short beside a fitting on-demand offer is left to the create,
 * whose PREEMPTIBLE_ quota refusal blocks only the spot offer: ./errors.ts `forMarket`).
 */
export function quotaShortfallsOf(offers: readonly Offer[], quotas: ReadonlyMap<string, readonly GcpQuota[]>): QuotaShortfall[] {
  const byKey = new Map<string, { fits: boolean; short: QuotaShortfall[] }>();
  for (const o of offers) {
    // A reservation's instances were counted when it was made.
    if (!o.gpu || o.market === 'reserved') continue;
    const metric = gpuQuotaMetric(o.gpu.model, o.market === 'spot' || o.queued === true);
    const q = metric ? quotas.get(o.region)?.find((x) => x.metric === metric) : undefined;
    const key = `${o.region}/${o.instanceType}`;
    const seen = byKey.get(key) ?? { fits: false, short: [] };
    byKey.set(key, seen);
    if (!q || q.limit - q.usage >= o.gpu.count) {
      seen.fits = true;
      continue;
    }
    const free = Math.max(0, q.limit - q.usage);
    const message = `quota ${q.metric} in ${o.region}: ${free} of ${q.limit} free, ${o.instanceType} needs ${o.gpu.count}`;
    if (!seen.short.some((s) => s.message === message)) seen.short.push({ region: o.region, instanceType: o.instanceType, message });
  }
  return [...byKey.values()].filter((k) => !k.fits && k.short.length > 0).map((k) => ({ ...k.short[0]!, message: k.short.map((s) => s.message).join('; ') }));
}
