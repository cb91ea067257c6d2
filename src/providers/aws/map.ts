import type { InstanceStatus, Json, Observed, Offer, Preemption, SshEndpoint } from '../../core/provider';
import type { LivePrice } from '../price-cache';
import type { CatalogEntry, ImageFamily } from './catalog';

/** EC2 instance-state-name → normalised status. `terminated` means gone and is never observed. */
export const STATE_TABLE: Readonly<Record<string, InstanceStatus | 'gone'>> = {
  pending: 'Pending',
  running: 'Running',
  stopping: 'Stopping',
  stopped: 'Stopped',
  'shutting-down': 'Terminating',
  terminated: 'gone',
};

/** The non-terminated states, for the `instance-state-name` filter. */
export const LIVE_STATES = Object.keys(STATE_TABLE).filter((s) => STATE_TABLE[s] !== 'gone');

/** The login user of the Ubuntu and Deep Learning (Ubuntu) AMIs `prepare` picks. */
export const SSH_USER = 'ubuntu';

/** What `plan` stores in `Offer.extra` for `prepare`. */
export interface OfferExtra {
  image: ImageFamily;
  [key: string]: Json;
}

/** A catalog entry in a region; priced from the Price List when `live` is given, else from the dated table. */
export function offerFor(cloud: string, region: string, e: CatalogEntry, live?: LivePrice): Offer {
  const extra: OfferExtra = { image: e.image };
  return {
    cloud,
    region,
    instanceType: e.instanceType,
    ...(e.gpuModel ? { gpu: { model: e.gpuModel, count: e.gpuCount, ...(e.gpuMemoryGiB ? { memoryGiB: e.gpuMemoryGiB } : {}) } } : {}),
    vcpus: e.vcpus,
    memoryGiB: e.memoryGiB,
    ...(live
      ? { pricePerHour: live.pricePerHour, priceSource: 'api', pricedAt: live.pricedAt }
      : { pricePerHour: e.pricePerHour, priceSource: 'catalog', pricedAt: e.priceDate }),
    currency: 'USD',
    spot: false,
    extra,
  };
}

/** The image family an offer asks for (`cpu` when the offer came from elsewhere). */
export function imageFamilyOf(offer: Offer): ImageFamily {
  const x = offer.extra;
  if (x && typeof x === 'object' && !Array.isArray(x) && x.image === 'gpu') return 'gpu';
  return offer.gpu ? 'gpu' : 'cpu';
}

/** The fields of an EC2 instance this adapter reads (zod-checked in api.ts). */
export interface Ec2Instance {
  InstanceId: string;
  InstanceType?: string | undefined;
  State: { Name: string };
  StateReason?: { Code?: string | undefined; Message?: string | undefined } | undefined;
  StateTransitionReason?: string | undefined;
  PublicIpAddress?: string | undefined;
  PublicDnsName?: string | undefined;
  PrivateIpAddress?: string | undefined;
  Placement?: { AvailabilityZone?: string | undefined } | undefined;
  /** `spot` for Spot instances (they count against the spot quotas); absent for on-demand. */
  InstanceLifecycle?: string | undefined;
  /** The spot request behind a spot instance (its status tells a reclaim: ./spot.ts). */
  SpotInstanceRequestId?: string | undefined;
  CpuOptions?: { CoreCount?: number | undefined; ThreadsPerCore?: number | undefined } | undefined;
  Tags?: { Key?: string | undefined; Value?: string | undefined }[] | undefined;
}

/** The value of tag `key` on an instance. */
/** Tag holding `createKeyOf(spec.idempotencyKey)`; `create` looks for it before RunInstances, `observe` reports it as the create key. */
export const IDEM_TAG = 'gpuprov-idem';

export function tagOf(i: Ec2Instance, key: string): string | undefined {
  return i.Tags?.find((t) => t.Key === key)?.Value;
}

function endpointOf(i: Ec2Instance, usePrivateIp: boolean): SshEndpoint | undefined {
  // AWS assigns the public IP a little after the instance reports `running`: no host yet means
  // no endpoint yet (the caller keeps polling), never a guessed one.
  const host = usePrivateIp ? i.PrivateIpAddress : i.PublicIpAddress || i.PublicDnsName;
  return host ? { host, port: 22, user: SSH_USER } : undefined;
}

/** Normalise one instance; `undefined` for terminated ones. `preemption`: the spot market's reclaim of it (./spot.ts). */
export function observedOf(cloud: string, region: string, i: Ec2Instance, usePrivateIp: boolean, preemption?: Preemption): Observed | undefined {
  const mapped = STATE_TABLE[i.State.Name];
  if (mapped === 'gone') return undefined;
  const status: InstanceStatus = mapped ?? 'Failed';
  const zone = i.Placement?.AvailabilityZone;
  const endpoint = status === 'Running' ? endpointOf(i, usePrivateIp) : undefined;
  const reason = mapped ? i.StateReason?.Message || i.StateTransitionReason || undefined : `unknown EC2 state "${i.State.Name}"`;
  return {
    id: i.InstanceId,
    status,
    ...(reason ? { reason } : {}),
    ...(endpoint ? { endpoint } : {}),
    location: zone ? { cloud, region, zone } : { cloud, region },
    ...(i.InstanceType ? { instanceType: i.InstanceType } : {}),
    ...(tagOf(i, IDEM_TAG) !== undefined ? { createKey: tagOf(i, IDEM_TAG)! } : {}),
    ...(preemption ? { preemption } : {}),
  };
}
