import { type InstanceStatus, type Location, type Observed, type Offer } from '../../core/provider';
import { ownedName } from '../deployment';
import { keyName as hashedKeyName } from '../ssh-keys';
import type { MassedInstance, MassedProduct } from './api';

export const CLOUD = 'massedcompute';
/** Launches always ask for `regionName: "any"`: the cloud places the VM, so gpuprov has one region. */
export const ANY_REGION = 'any';

/** Vendor status → normalised status. `undefined` = gone. Unknown words are Pending (brev's reading). */
export const STATUS: Record<string, InstanceStatus | undefined> = {
  pending: 'Pending',
  creating: 'Pending',
  provisioning: 'Pending',
  booting: 'Pending',
  starting: 'Pending',
  restarting: 'Pending',
  rented: 'Running',
  active: 'Running',
  running: 'Running',
  stopping: 'Stopping',
  stopped: 'Stopped',
  terminating: 'Terminating',
  deleting: 'Terminating',
  failed: 'Failed',
  error: 'Failed',
  terminated: undefined,
  deleted: undefined,
};

/** Key names may not hold punctuation (brev): `gpuprov` + a short hash of the key, no separator. */
export function keyName(publicKey: string): string {
  return hashedKeyName(publicKey, 'gpuprov');
}

/** `gpu_8x_h100_sxm` → 8 × `h100_sxm`; products without `<n>x` are CPU-only. */
export function gpuOf(product: string): { count: number; model: string } | undefined {
  const m = /(?:^|_)(\d+)x_([a-z0-9_]+)$/i.exec(product);
  return m ? { count: Number(m[1]), model: m[2]!.toUpperCase().replace(/_/g, '-') } : undefined;
}

function hasCapacity(p: MassedProduct): boolean {
  const c = p.capacity_available;
  return c == null ? p.regions_with_capacity_available.length > 0 : typeof c === 'boolean' ? c : c > 0;
}

/**
 * Products with capacity → offers in region `any` (launches let the cloud place the VM), cheapest
 * first; `planOffers` keeps the ones that match the request.
 */
export function toOffers(inventory: Record<string, MassedProduct>, pricedAt: string): Offer[] {
  const offers: Offer[] = [];
  for (const [name, p] of Object.entries(inventory)) {
    if (!hasCapacity(p)) continue;
    const regions = p.regions_with_capacity_available.map((r) => r.name);
    const g = gpuOf(name);
    const specs = p.instance_type.specs;
    offers.push({
      cloud: CLOUD,
      region: ANY_REGION,
      instanceType: name,
      ...(g ? { gpu: g } : {}),
      ...(specs?.vcpu_count === undefined ? {} : { vcpus: specs.vcpu_count }),
      ...(specs?.memory_gib === undefined ? {} : { memoryGiB: specs.memory_gib }),
      pricePerHour: p.instance_type.price_cents_per_hour / 100,
      currency: 'USD',
      priceSource: 'api',
      pricedAt,
      extra: { regionsWithCapacity: regions },
    });
  }
  return offers.sort((a, b) => (a.pricePerHour ?? Infinity) - (b.pricePerHour ?? Infinity));
}

/** The instance is this VM's in this deployment: named `gpuprov-<vm>-<deployment hash>`. */
export function hasIdentity(i: MassedInstance, vmName: string, deployment: string): boolean {
  return i.name === ownedName(vmName, deployment);
}

/**
 * Normalise a listed instance. The user comes from `username`; a Running status with the OS not
 * booted yet (`os_booted: 0`) is still Pending.
 */
export function toObserved(i: MassedInstance, at: Location): Observed | undefined {
  const word = (i.status ?? '').toLowerCase();
  const status = word in STATUS ? STATUS[word] : 'Pending';
  if (status === undefined) return undefined;
  const base = { id: i.uuid, location: at, ...(i.product?.name ? { instanceType: i.product.name } : {}) };
  const booted = i.os_booted == null || i.os_booted === true || i.os_booted === 1;
  if (status === 'Running' && !booted) return { ...base, status: 'Pending', reason: 'OS booting' };
  if (status === 'Running' && i.ip) return { ...base, status, endpoint: { host: i.ip, port: 22, ...(i.username ? { user: i.username } : {}) } };
  return { ...base, status, ...(status === 'Failed' || !(word in STATUS) ? { reason: i.status ?? 'unknown' } : {}) };
}
