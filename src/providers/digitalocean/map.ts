import { createHash } from 'node:crypto';
import { IDENTITY_TAG, OWNER_TAG, identityName, type InstanceSpec, type InstanceStatus, type Location, type Observed, type Offer } from '../../core/provider';
import { renderCloudInit } from '../cloud-init';
import { ownedName } from '../deployment';
import type { CreateDropletBody, CreateFirewallBody, DoDroplet, DoSize } from './api';

export const CLOUD = 'digitalocean';
export const SSH_USER = 'root';

/** Vendor status → normalised status. `undefined` = gone (`archive`). */
export const STATUS: Record<string, InstanceStatus | undefined> = {
  new: 'Pending',
  active: 'Running',
  off: 'Stopped',
  archive: undefined,
};

/** Tag names allow only `[a-zA-Z0-9_\-:]`, so the identity is `key:value`, not `key=value`. */
function tagSafe(s: string): string {
  return s.replace(/[^a-zA-Z0-9_\-:]/g, '_');
}
export function identityTag(vmName: string): string {
  return `${IDENTITY_TAG}:${tagSafe(vmName)}`;
}
export function ownerTag(owner: string): string {
  return `${OWNER_TAG}:${tagSafe(owner)}`;
}

/** The tag only this deployment's droplets of the VM carry (`gpuprov-<vm>-<deployment hash>`): the firewall targets it. */
export function deploymentVmTag(vmName: string, deployment: string): string {
  return tagSafe(ownedName(vmName, deployment));
}

/** The VM name of a droplet tagged with `deployment`, else undefined (another deployment's, or untagged). */
export function vmNameOf(d: DoDroplet, deployment: string): string | undefined {
  if (!d.tags.includes(ownerTag(deployment))) return undefined;
  const prefix = `${IDENTITY_TAG}:`;
  return d.tags.find((t) => t.startsWith(prefix))?.slice(prefix.length);
}

/** Tagged by another deployment: never deleted, even by id. */
export function isForeign(d: DoDroplet, deployment: string): boolean {
  return d.tags.some((t) => t.startsWith(`${OWNER_TAG}:`)) && !d.tags.includes(ownerTag(deployment));
}

/** The per-VM firewall's name: `gpuprov-<vm>-<deployment hash>` with only `[a-zA-Z0-9.-]` (DO's firewall name rule). */
export function firewallName(vmName: string, deployment: string): string {
  return ownedName(vmName, deployment).replace(/[^a-zA-Z0-9.-]/g, '-');
}

const ANYWHERE = ['0.0.0.0/0', '::/0'];

/**
 * The per-VM firewall: inbound SSH, plus the k3s API when the spec opens 6443; every outbound
 * allowed (a DO firewall with no outbound rule blocks all egress: no apt, no k3s download).
 * It covers this deployment's droplets of the VM (their {@link deploymentVmTag}).
 */
export function firewallBody(vmName: string, deployment: string, openPorts: readonly number[]): CreateFirewallBody {
  const inbound = [22, ...(openPorts.includes(6443) ? [6443] : [])];
  return {
    name: firewallName(vmName, deployment),
    inbound_rules: inbound.map((p) => ({ protocol: 'tcp', ports: String(p), sources: { addresses: ANYWHERE } })),
    outbound_rules: (['tcp', 'udp', 'icmp'] as const).map((protocol) => ({ protocol, ports: '0', destinations: { addresses: ANYWHERE } })),
    tags: [deploymentVmTag(vmName, deployment)],
  };
}

/** DO's key fingerprint (MD5 of the key blob, colon-separated): accepted by create in place of the id. */
export function fingerprint(publicKey: string): string {
  const blob = publicKey.trim().split(/\s+/)[1] ?? '';
  return createHash('md5').update(Buffer.from(blob, 'base64')).digest('hex').match(/../g)!.join(':');
}

/** Base image per size: GPU droplets need the vendor's GPU images. */
export function imageFor(size: DoSize): string {
  const g = size.gpu_info;
  if (!g?.count) return 'ubuntu-24-04-x64';
  if (/amd|mi\d/i.test(g.model ?? '') || /amd|mi\d/i.test(size.slug)) return 'gpu-amd-base';
  return g.count >= 8 ? 'gpu-h100x8-base' : 'gpu-h100x1-base';
}

/** Memory per GPU: DigitalOcean lists the droplet's total VRAM (`gpu-h100x8-640gb`: 640). */
function vramPerGpu(s: DoSize): number | undefined {
  const total = s.gpu_info?.vram?.amount;
  const count = s.gpu_info?.count;
  return total && count ? total / count : undefined;
}

/** Available sizes × their regions, cheapest first; `planOffers` keeps the ones that match the request. */
export function toOffers(sizes: DoSize[], pricedAt: string): Offer[] {
  return sizes
    .filter((s) => s.available)
    .flatMap((s) =>
      s.regions.map((region): Offer => {
        const mem = vramPerGpu(s);
        return {
          cloud: CLOUD,
          region,
          instanceType: s.slug,
          ...(s.gpu_info?.count ? { gpu: { model: s.gpu_info.model ?? s.slug, count: s.gpu_info.count, ...(mem ? { memoryGiB: mem } : {}) } } : {}),
          ...(s.vcpus === undefined ? {} : { vcpus: s.vcpus }),
          ...(s.memory === undefined ? {} : { memoryGiB: s.memory / 1024 }),
          pricePerHour: s.price_hourly,
          currency: 'USD',
          priceSource: 'api',
          pricedAt,
          extra: { image: imageFor(s) },
        };
      }),
    )
    .sort((a, b) => (a.pricePerHour ?? Infinity) - (b.pricePerHour ?? Infinity));
}

export function toObserved(d: DoDroplet, at: Location): Observed | undefined {
  if (!(d.status in STATUS)) return { id: String(d.id), status: 'Pending', reason: `unknown status ${d.status}`, location: at };
  const status = STATUS[d.status];
  if (status === undefined) return undefined;
  const base = { id: String(d.id), status, location: at, ...(d.size_slug ? { instanceType: d.size_slug } : {}) };
  const ip = d.networks?.v4.find((n) => n.type === 'public')?.ip_address;
  return status === 'Running' && ip ? { ...base, endpoint: { host: ip, port: 22, user: SSH_USER } } : base;
}

/** The droplet `create` asks for: named `gpuprov-<vm>`, carrying the identity, owner and firewall tags. */
export function dropletBody(offer: Offer, spec: InstanceSpec, deployment: string, sshKeys: string[]): CreateDropletBody {
  const extra = offer.extra as { image?: unknown } | undefined;
  // `--image`: a slug, or a numeric image id (sent as a number, as the API documents ids).
  const asked = spec.image === undefined ? undefined : /^\d+$/.test(spec.image) ? Number(spec.image) : spec.image;
  return {
    name: identityName(spec.vmName),
    region: offer.region,
    size: offer.instanceType,
    image: asked ?? (typeof extra?.image === 'string' ? extra.image : 'ubuntu-24-04-x64'),
    ssh_keys: sshKeys,
    tags: [identityTag(spec.vmName), ownerTag(deployment), deploymentVmTag(spec.vmName, deployment)],
    user_data: renderCloudInit(spec.bootScript, spec.publicKeys),
  };
}
