/** Pure Lambda → gpuprov mapping: offers, status table, identity, SSH endpoint. */
import { IDENTITY_TAG, OWNER_TAG, type InstanceStatus, type Location, type Observed, type Offer } from '../../core/provider';
import type { LambdaInstance, LambdaInstanceTypeEntry } from './api';

export const CLOUD = 'lambda';
export const SSH_USER = 'ubuntu';

/** Vendor status → normalised; `null` = terminal (not returned by observe). */
export const STATUS: Record<string, InstanceStatus | null> = {
  booting: 'Pending',
  active: 'Running',
  // The spec lists "unhealthy" without saying whether it recovers; an unhealthy VM is not handed over.
  unhealthy: 'Failed',
  terminating: 'Terminating',
  terminated: null,
  preempted: null,
};

/** `"H100 (80 GB SXM5)"` → model and memory. */
export function parseGpuDescription(desc: string): { model: string; memoryGiB?: number } {
  const m = /^\s*([A-Za-z0-9]+(?:\s[A-Za-z0-9]+)*?)\s*\((\d+)\s*GB/i.exec(desc);
  if (m) return { model: m[1]!.replace(/\s+/g, '').toUpperCase(), memoryGiB: Number(m[2]) };
  return { model: desc.trim().split(/\s+/)[0]?.toUpperCase() ?? '' };
}

/** Offers: one per (type, region with capacity), cheapest first; `planOffers` keeps the ones that match the request. */
export function toOffers(types: Record<string, LambdaInstanceTypeEntry>, pricedAt: string): Offer[] {
  const offers: Offer[] = [];
  for (const entry of Object.values(types)) {
    const t = entry.instance_type;
    const gpus = t.specs.gpus;
    const desc = t.gpu_description ? parseGpuDescription(t.gpu_description) : undefined;
    const price = t.price_cents_per_hour / 100;
    for (const r of entry.regions_with_capacity_available) {
      offers.push({
        cloud: CLOUD,
        region: r.name,
        instanceType: t.name,
        ...(gpus > 0 && desc ? { gpu: { model: desc.model, count: gpus, ...(desc.memoryGiB ? { memoryGiB: desc.memoryGiB } : {}) } } : {}),
        vcpus: t.specs.vcpus,
        memoryGiB: t.specs.memory_gib,
        pricePerHour: price,
        currency: 'USD',
        priceSource: 'api',
        pricedAt,
      });
    }
  }
  return offers.sort((a, b) => (a.pricePerHour ?? 0) - (b.pricePerHour ?? 0) || a.region.localeCompare(b.region));
}

const tagOf = (inst: LambdaInstance, key: string): string | undefined => inst.tags?.find((t) => t.key === key)?.value;

/** The tags `create` writes: the VM's identity and the owning deployment (read back by {@link vmNameOf}). */
export function identityTags(vmName: string, deployment: string): { key: string; value: string }[] {
  return [
    { key: IDENTITY_TAG, value: vmName },
    { key: OWNER_TAG, value: deployment },
  ];
}

/** The VM name of an instance of `deployment` (both tags), else undefined: another deployment's instances are invisible. */
export function vmNameOf(inst: LambdaInstance, deployment: string): string | undefined {
  return tagOf(inst, OWNER_TAG) === deployment ? tagOf(inst, IDENTITY_TAG) : undefined;
}

/** The instance carries this VM's identity in this deployment. */
export function hasIdentity(inst: LambdaInstance, vmName: string, deployment: string): boolean {
  return vmNameOf(inst, deployment) === vmName;
}

/** Tagged by another deployment: never deleted, even by id. */
export function isForeign(inst: LambdaInstance, deployment: string): boolean {
  const owner = tagOf(inst, OWNER_TAG);
  return owner !== undefined && owner !== deployment;
}

export function toObserved(inst: LambdaInstance, at: Location): Observed | undefined {
  const status = inst.status in STATUS ? STATUS[inst.status] : 'Pending';
  if (status === null || status === undefined) return undefined;
  return {
    id: inst.id,
    status,
    ...(status === 'Failed' || !(inst.status in STATUS) ? { reason: inst.status } : {}),
    ...(status === 'Running' && inst.ip ? { endpoint: { host: inst.ip, port: 22, user: SSH_USER } } : {}),
    location: { cloud: CLOUD, region: inst.region?.name ?? at.region },
    ...(inst.instance_type?.name ? { instanceType: inst.instance_type.name } : {}),
  };
}
