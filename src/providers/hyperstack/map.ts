import { IDENTITY_TAG, OWNER_TAG, type InstanceStatus, type Location, type Observed, type Offer } from '../../core/provider';
import { envName, type HsFlavor, type HsInstance, type HsPrice } from './api';

export const CLOUD = 'hyperstack';
/** Login user of the Ubuntu images gpuprov launches. */
export const SSH_USER = 'ubuntu';

/** Vendor status → normalised status. `undefined` = gone (never reported by observe). */
export const STATUS: Record<string, InstanceStatus | undefined> = {
  CREATING: 'Pending',
  BUILD: 'Pending',
  STARTING: 'Pending',
  REBOOTING: 'Pending',
  HARD_REBOOT: 'Pending',
  ACTIVE: 'Running',
  STOPPING: 'Stopping',
  SHUTOFF: 'Stopped',
  HIBERNATING: 'Stopping',
  HIBERNATED: 'Stopped',
  DELETING: 'Terminating',
  ERROR: 'Failed',
  DELETED: undefined,
};

/** Every VM, key pair and firewall lives in an environment bound to one region: gpuprov keeps one per region. */
export function environmentFor(region: string): string {
  return `gpuprov-${region}`;
}

export function identityLabels(vmName: string, owner: string): string[] {
  return [`${IDENTITY_TAG}=${vmName}`, `${OWNER_TAG}=${owner}`];
}

function priceOf(f: HsFlavor, prices: HsPrice[]): number | undefined {
  if (!f.gpu || !f.gpu_count) return undefined;
  const p = prices.find((x) => x.name === f.gpu);
  return p === undefined || !Number.isFinite(p.value) ? undefined : Math.round(p.value * f.gpu_count * 10000) / 10000;
}

/** Stocked flavors → offers, cheapest first (unpriced last); `planOffers` keeps the ones that match the request. */
export function toOffers(flavors: HsFlavor[], prices: HsPrice[], pricedAt: string): Offer[] {
  const offers = flavors
    .filter((f) => f.stock_available !== false)
    .map((f): Offer => {
      const price = priceOf(f, prices);
      return {
        cloud: CLOUD,
        region: f.region_name,
        instanceType: f.name,
        ...(f.gpu && f.gpu_count ? { gpu: { model: f.gpu, count: f.gpu_count } } : {}),
        ...(f.cpu == null ? {} : { vcpus: f.cpu }),
        ...(f.ram == null ? {} : { memoryGiB: f.ram }),
        ...(price === undefined ? {} : { pricePerHour: price, currency: 'USD', priceSource: 'api', pricedAt }),
      };
    });
  return offers.sort((a, b) => (a.pricePerHour ?? Infinity) - (b.pricePerHour ?? Infinity));
}

function labelsOf(i: HsInstance): string[] {
  return (i.labels ?? []).map((l) => (typeof l === 'string' ? l : l.label));
}

const labelValue = (i: HsInstance, key: string): string | undefined =>
  labelsOf(i)
    .find((l) => l.startsWith(`${key}=`))
    ?.slice(key.length + 1);

/** The VM name of a VM labelled with `deployment`, else undefined (another deployment's, or unlabelled). */
export function vmNameOf(i: HsInstance, deployment: string): string | undefined {
  return labelValue(i, OWNER_TAG) === deployment ? labelValue(i, IDENTITY_TAG) : undefined;
}

/** Labelled by another deployment: never deleted, even by id. */
export function isForeign(i: HsInstance, deployment: string): boolean {
  const owner = labelValue(i, OWNER_TAG);
  return owner !== undefined && owner !== deployment;
}

/** True when the VM carries this VM's identity and deployment labels, in `environment`. */
export function hasIdentity(i: HsInstance, vmName: string, deployment: string, environment: string): boolean {
  const env = envName(i.environment);
  if (env !== undefined && env !== environment) return false;
  return vmNameOf(i, deployment) === vmName;
}

/**
 * Normalise a VM. Hazard: ACTIVE is not enough; the VM is reachable only once its floating IP
 * is ATTACHED, so until then it stays Pending without an endpoint.
 */
export function toObserved(i: HsInstance, at: Location): Observed | undefined {
  const status = STATUS[i.status.toUpperCase()];
  if (status === undefined) {
    if (i.status.toUpperCase() === 'DELETED') return undefined;
    return { id: String(i.id), status: 'Pending', reason: `unknown status ${i.status}`, location: at };
  }
  const flavor = typeof i.flavor === 'string' ? i.flavor : i.flavor?.name;
  const base = { id: String(i.id), location: at, ...(flavor ? { instanceType: flavor } : {}) };
  if (status === 'Running') {
    const attached = (i.floating_ip_status ?? '').toUpperCase() === 'ATTACHED' && !!i.floating_ip;
    if (!attached) return { ...base, status: 'Pending', reason: `ACTIVE, floating IP ${i.floating_ip_status ?? 'not assigned'}` };
    return { ...base, status, endpoint: { host: i.floating_ip!, port: 22, user: SSH_USER } };
  }
  return { ...base, status, ...(status === 'Failed' ? { reason: i.status } : {}) };
}
