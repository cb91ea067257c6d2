/** Pure Docker → gpuprov mapping: status table, endpoint, offers, identity. */
import { ownedName } from '../deployment';
import { IDENTITY_TAG, OWNER_TAG, type InstanceStatus, type Observed, type Offer, type SshEndpoint } from '../../core/provider';
import type { ContainerSummary, Info } from './api';

export const CLOUD = 'docker';
/** The one "region": the daemon's host. */
export const REGION = 'local';
export const SSH_USER = 'root';
/** The image built from `docker/sshd/Dockerfile` (`docker build -t gpuprov/sshd:1 docker/sshd`). */
export const DEFAULT_IMAGE = 'gpuprov/sshd:1';

/** Container `State` → normalised status. The sshd container never exits on purpose, so exited = Failed. */
export const STATUS: Record<string, InstanceStatus> = {
  created: 'Pending',
  restarting: 'Pending',
  running: 'Running',
  paused: 'Stopped',
  removing: 'Terminating',
  exited: 'Failed',
  dead: 'Failed',
};

/** When the size table's price (0: it is your machine) was set; offers carry it as a `catalog` price. */
export const PRICE_DATE = '2026-11-30';

/** Sizes offered on the daemon's host (price 0: it is your machine). */
export const SIZES = [
  { instanceType: 'cpu-1', vcpus: 1, memoryGiB: 1 },
  { instanceType: 'cpu-2', vcpus: 2, memoryGiB: 2 },
  { instanceType: 'cpu-4', vcpus: 4, memoryGiB: 8 },
] as const;

/** The sizes that fit the daemon's host; `planOffers` keeps the ones that match the request (CPU only). */
export function offersFor(info: Info): Offer[] {
  const hostGiB = info.MemTotal / 2 ** 30;
  return SIZES.filter((s) => s.vcpus <= info.NCPU && s.memoryGiB <= hostGiB).map((s) => ({
    cloud: CLOUD,
    region: REGION,
    instanceType: s.instanceType,
    vcpus: s.vcpus,
    memoryGiB: s.memoryGiB,
    pricePerHour: 0,
    currency: 'USD',
    priceSource: 'catalog' as const,
    pricedAt: PRICE_DATE,
  }));
}

export function sizeOf(instanceType: string): (typeof SIZES)[number] | undefined {
  return SIZES.find((s) => s.instanceType === instanceType);
}

/** Container name (unique per daemon): `gpuprov-<vm>-<deployment hash>` within Docker's `[a-zA-Z0-9][a-zA-Z0-9_.-]+`. */
export function containerName(vmName: string, deployment: string): string {
  return ownedName(vmName.replace(/[^a-zA-Z0-9_.-]/g, '-'), deployment);
}

/** The published host port of 22/tcp: `127.0.0.1:<PublicPort>` (a wildcard bind is reached on loopback too). */
export function endpointOf(c: ContainerSummary): SshEndpoint | undefined {
  const p = (c.Ports ?? []).find((x) => x.PrivatePort === 22 && x.Type === 'tcp' && x.PublicPort);
  if (!p?.PublicPort) return undefined;
  const ip = p.IP && p.IP !== '0.0.0.0' && p.IP !== '::' ? p.IP : '127.0.0.1';
  return { host: ip, port: p.PublicPort, user: SSH_USER };
}

export function toObserved(c: ContainerSummary): Observed {
  const status = STATUS[c.State] ?? 'Pending';
  const o: Observed = { id: c.Id, status, location: { cloud: CLOUD, region: REGION } };
  if (status !== 'Running') o.reason = c.Status ?? c.State;
  const ep = status === 'Running' ? endpointOf(c) : undefined;
  if (ep) o.endpoint = ep;
  return o;
}

/** The container carries this VM's identity and this deployment's owner label. */
export function hasIdentity(c: ContainerSummary, vmName: string, deployment: string): boolean {
  return c.Labels?.[IDENTITY_TAG] === vmName && c.Labels[OWNER_TAG] === deployment;
}

/** Labelled by another deployment: never removed, even by id. */
export function isForeign(c: ContainerSummary, deployment: string): boolean {
  const owner = c.Labels?.[OWNER_TAG];
  return owner !== undefined && owner !== deployment;
}
