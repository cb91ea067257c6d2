/** Pure RunPod → gpuprov mapping: offers per data centre, status table, NAT'd SSH endpoint. */
import { type InstanceStatus, type Location, type Observed, type Offer, type SshEndpoint } from '../../core/provider';
import { ownedName } from '../deployment';
import { keyMaterial } from '../ssh-keys';
import type { RunPodGpu, RunPodPod } from './api';

export const CLOUD = 'runpod';
export const DEFAULT_USER = 'root';

/** Vendor status → normalised; `null` = terminal. */
export const STATUS: Record<string, InstanceStatus | null> = {
  PROVISIONING: 'Pending',
  STARTING: 'Pending',
  CREATED: 'Pending',
  RUNNING: 'Running',
  EXITED: 'Stopped',
  ERROR: 'Failed',
  TERMINATED: null,
};

const AVAILABILITY_RANK: Record<string, number> = { HIGH: 0, MEDIUM: 1, LOW: 2 };

/**
 * One offer per (GPU type, data centre with stock) for `count` GPUs, Secure Cloud price × count,
 * cheapest first; `planOffers` keeps the ones that match the request.
 */
export function toOffers(gpus: RunPodGpu[], count: number, pricedAt: string): Offer[] {
  const offers: (Offer & { rank: number })[] = [];
  for (const g of gpus) {
    const unit = g.price?.secure;
    if (unit === null || unit === undefined || g.secure === false) continue;
    const price = Math.round(unit * count * 10_000) / 10_000;
    for (const dc of g.dataCenters ?? []) {
      const avail = dc.availability ?? 'NONE';
      if (avail === 'NONE') continue;
      offers.push({
        cloud: CLOUD,
        region: dc.id,
        instanceType: g.id,
        gpu: { model: g.id, count, ...(g.memory ? { memoryGiB: g.memory } : {}) },
        pricePerHour: price,
        currency: 'USD',
        priceSource: 'api',
        pricedAt,
        rank: AVAILABILITY_RANK[avail] ?? 3,
      });
    }
  }
  return offers
    .sort((a, b) => (a.pricePerHour ?? 0) - (b.pricePerHour ?? 0) || a.rank - b.rank || a.region.localeCompare(b.region))
    .map(({ rank: _rank, ...o }) => o);
}

export function statusOf(pod: RunPodPod): string {
  return (pod.status ?? pod.desiredStatus ?? 'PROVISIONING').toUpperCase();
}

/** The pod is this VM's in this deployment (its name) and at `at`. */
export function hasIdentity(pod: RunPodPod, vmName: string, deployment: string, at: Location): boolean {
  return pod.name === ownedName(vmName, deployment) && (pod.dataCenterId ?? at.region) === at.region;
}

/** Direct TCP to the pod's NAT port: `ssh.direct` (v2), else `publicIp` + `portMappings["22"]` (v1), else runtime ports. */
export function sshEndpoint(pod: RunPodPod): SshEndpoint | undefined {
  const d = pod.ssh?.direct;
  if (d) return { host: d.host, port: d.port, user: d.username ?? DEFAULT_USER };
  const mapped = pod.portMappings?.['22'];
  if (pod.publicIp && mapped) return { host: pod.publicIp, port: mapped, user: DEFAULT_USER };
  const p = pod.runtime?.ports?.find((x) => x.private === 22 && x.isIpPublic !== false && x.ip && x.public);
  return p ? { host: p.ip!, port: p.public!, user: DEFAULT_USER } : undefined;
}

export function toObserved(pod: RunPodPod, at: Location): Observed | undefined {
  const raw = statusOf(pod);
  const status = raw in STATUS ? STATUS[raw] : 'Pending';
  if (status === null || status === undefined) return undefined;
  const endpoint = status === 'Running' ? sshEndpoint(pod) : undefined;
  return {
    id: pod.id,
    status,
    ...(status === 'Failed' || !(raw in STATUS) ? { reason: raw } : {}),
    ...(endpoint ? { endpoint } : {}),
    location: { cloud: CLOUD, region: pod.dataCenterId ?? at.region },
    ...(pod.gpu?.id ? { instanceType: pod.gpu.id } : {}),
  };
}

/** The account key set with `add` appended when missing; existing keys are kept verbatim. */
export function mergeKeys(existing: string[], add: string): { keys: string[]; changed: boolean } {
  if (existing.some((k) => keyMaterial(k) === keyMaterial(add))) return { keys: existing, changed: false };
  return { keys: [...existing, add.trim()], changed: true };
}
