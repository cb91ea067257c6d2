/**
 * Pure Verda → gpuprov mapping: status table, identity, offers, create bodies, and the spot market.
 *
 * Spot, as the `verda` client (1.25.0, pinned in test/contract/requirements.txt; its CHANGELOG and
 * `instances`/`instance_types` services) and Verda's own CLI (github.com/verda-cloud/verda-cli,
 * `vm create --is-spot`, `availability --spot`) show it:
 * - a spot instance is the same `POST /instances` with `is_spot: true` (the client sends no
 *   `contract` unless asked; the CLI fills in `SPOT`, which `is_spot` already means);
 * - its price is `spot_price` on `GET /instance-types` (fixed by Verda, no bid: nothing answers
 *   "price too low"); the CLI prices spot only where it is above 0;
 * - its stock is `GET /instance-availability?isSpot=true`, not the on-demand one (dstack
 *   issue 3927: spot offers judged by the on-demand stock go missing);
 * - no spot stock at create is the same sold-out answer as on-demand (errors.ts: Capacity, offer
 *   scope; the offer key carries `/spot`);
 * - a reclaimed instance is "spot discontinued": the instance `discontinued`, `is_spot` true, its OS
 *   volume kept detached unless `os_volume.on_spot_discontinue` says otherwise. No notice or
 *   deadline is published. `observe` keeps counting a discontinued instance gone (a release waits
 *   until observe lists nothing, and a delete of one answers "can't discontinue a discontinued
 *   instance"); `inventory` reports a reclaimed spot instance with `preemption`, so the watcher
 *   tells a reclaim from a vanishing.
 */
import { createHash } from 'node:crypto';
import { ownedName } from '../deployment';
import { IDENTITY_TAG, OWNER_TAG, identityName, type InstanceSpec, type InstanceStatus, type Location, type Observed, type Offer } from '../../core/provider';
import type { CreateInstanceBody, VerdaAvailability, VerdaInstance, VerdaType } from './api';

export const CLOUD = 'verda';
export const SSH_USER = 'root';

/** Vendor status (SDK `InstanceStatus`) → normalised status. `undefined` = gone. */
export const STATUS: Record<string, InstanceStatus | undefined> = {
  new: 'Pending',
  ordered: 'Pending',
  validating: 'Pending',
  provisioning: 'Pending',
  restoring: 'Pending',
  running: 'Running',
  offline: 'Stopped',
  starting_hibernation: 'Stopping',
  hibernating: 'Stopped',
  deleting: 'Terminating',
  error: 'Failed',
  no_capacity: 'Failed',
  discontinued: undefined,
  deleted: undefined,
  notfound: undefined,
};

/** Startup scripts are per VM and deployment, and content-addressed: `gpuprov-<vm>-<deployment hash>.<hash>`. */
export function scriptName(vmName: string, deployment: string, script: string): string {
  return `${ownedName(vmName, deployment)}.${createHash('sha256').update(script).digest('hex').slice(0, 8)}`;
}
export function isScriptOf(name: string, vmName: string, deployment: string): boolean {
  const prefix = `${ownedName(vmName, deployment)}.`;
  return name.startsWith(prefix) && /^[0-9a-f]{8}$/.test(name.slice(prefix.length));
}

/** Verda has no tags: the hostname is the identity name and the description carries both labels. */
export function description(vmName: string, owner: string): string {
  return `${IDENTITY_TAG}=${vmName} ${OWNER_TAG}=${owner}`;
}
const labelOf = (i: VerdaInstance, key: string): string | undefined =>
  (i.description ?? '')
    .split(/\s+/)
    .find((w) => w.startsWith(`${key}=`))
    ?.slice(key.length + 1);

/** The VM name in the description of an instance of `deployment`, else undefined (another deployment's, or unlabelled). */
export function vmNameOf(i: VerdaInstance, deployment: string): string | undefined {
  return labelOf(i, OWNER_TAG) === deployment ? labelOf(i, IDENTITY_TAG) : undefined;
}
/** Labelled by another deployment: never deleted, even by id. */
export function isForeign(i: VerdaInstance, deployment: string): boolean {
  const owner = labelOf(i, OWNER_TAG);
  return owner !== undefined && owner !== deployment;
}
export function hasIdentity(i: VerdaInstance, vmName: string, deployment: string): boolean {
  return vmNameOf(i, deployment) === vmName;
}

function gpuCount(t: VerdaType): number {
  return t.gpu?.number_of_gpus ?? 0;
}
/**
 * Available (location × type) pairs, cheapest first (prices are USD: `currency=usd`); `planOffers`
 * keeps the ones that match the request. With `spotAvail` (asked only for a spot request), also the
 * spot offers: where the spot stock lists the type, at its `spot_price` with the on-demand price
 * beside (a type whose spot price is 0 or absent is not sold as spot).
 */
export function toOffers(types: VerdaType[], avail: VerdaAvailability, image: string, pricedAt: string, spotAvail?: VerdaAvailability): Offer[] {
  const byName = new Map(types.map((t) => [t.instance_type, t]));
  const offers: Offer[] = [];
  const each = (stock: VerdaAvailability, make: (t: VerdaType, region: string) => Offer | undefined): void => {
    for (const loc of stock)
      for (const name of loc.availabilities) {
        const t = byName.get(name);
        const o = t && make(t, loc.location_code);
        if (o) offers.push(o);
      }
  };
  each(avail, (t, region) => ({ ...offerOf(t, region, image, pricedAt), pricePerHour: t.price_per_hour }));
  each(spotAvail ?? [], (t, region) =>
    t.spot_price ? { ...offerOf(t, region, image, pricedAt), market: 'spot', pricePerHour: t.spot_price, onDemandPricePerHour: t.price_per_hour } : undefined,
  );
  return offers.sort((a, b) => (a.pricePerHour ?? Infinity) - (b.pricePerHour ?? Infinity));
}

function offerOf(t: VerdaType, region: string, image: string, pricedAt: string): Offer {
  return {
    cloud: CLOUD,
    region,
    instanceType: t.instance_type,
    // `name` carries the form factor and memory (`H100 SXM5 80GB`), `model` only the family.
    ...(gpuCount(t)
      ? {
          gpu: {
            model: t.name ?? t.model ?? t.instance_type,
            count: gpuCount(t),
            ...(t.gpu_memory?.size_in_gigabytes ? { memoryGiB: t.gpu_memory.size_in_gigabytes } : {}),
          },
        }
      : {}),
    ...(t.cpu?.number_of_cores === undefined ? {} : { vcpus: t.cpu.number_of_cores }),
    ...(t.memory?.size_in_gigabytes === undefined ? {} : { memoryGiB: t.memory.size_in_gigabytes }),
    currency: 'USD',
    priceSource: 'api',
    pricedAt,
    extra: { image },
  };
}

/**
 * A spot instance the market reclaimed ("spot discontinue"): listed `discontinued` with `is_spot`.
 * Only `inventory` reports it (`observe` counts a discontinued instance gone: see the header).
 * `seenAt` is the notice time (the API gives none).
 */
export function reclaimedSpot(i: VerdaInstance, at: Location, seenAt: string): Observed | undefined {
  if (!i.is_spot || i.status !== 'discontinued') return undefined;
  return {
    id: i.id,
    status: 'Terminating',
    reason: i.status,
    location: at,
    ...(i.instance_type ? { instanceType: i.instance_type } : {}),
    preemption: { noticeAt: seenAt, detail: 'discontinued (spot instance reclaimed)' },
  };
}

export function toObserved(i: VerdaInstance, at: Location): Observed | undefined {
  if (!(i.status in STATUS)) return { id: i.id, status: 'Pending', reason: `unknown status ${i.status}`, location: at };
  const status = STATUS[i.status];
  if (status === undefined) return undefined;
  const base = {
    id: i.id,
    status,
    location: at,
    ...(i.instance_type ? { instanceType: i.instance_type } : {}),
    ...(status === 'Failed' ? { reason: i.status } : {}),
  };
  // `ip` is null until provisioned and sometimes a list.
  const ip = Array.isArray(i.ip) ? i.ip[0] : i.ip;
  return status === 'Running' && ip ? { ...base, endpoint: { host: ip, port: 22, user: SSH_USER } } : base;
}

/** The instance `create` asks for: hostname `gpuprov-<vm>`, the identity in its description, the prepared keys and script. */
export function instanceBody(
  offer: Offer,
  spec: InstanceSpec,
  deployment: string,
  prepared: { sshKeyIds: string[]; startupScriptId: string | null },
  defaultImage: string,
): CreateInstanceBody {
  const extra = offer.extra as { image?: unknown } | undefined;
  const spot = offer.market === 'spot';
  return {
    instance_type: offer.instanceType,
    image: spec.image ?? (typeof extra?.image === 'string' ? extra.image : defaultImage),
    ssh_key_ids: prepared.sshKeyIds,
    ...(prepared.startupScriptId ? { startup_script_id: prepared.startupScriptId } : {}),
    hostname: identityName(spec.vmName),
    description: description(spec.vmName, deployment),
    location_code: offer.region,
    is_spot: spot,
    // `--disk-gb`: the OS volume's size (the verda client's OSVolume: name and size in GB); a spot
    // instance's goes with it when reclaimed, as it goes with a deleted one (index.ts `delete`).
    ...(spec.diskGb !== undefined
      ? { os_volume: { name: `${identityName(spec.vmName)}-os`, size: spec.diskGb, ...(spot ? { on_spot_discontinue: 'delete_permanently' as const } : {}) } }
      : {}),
  };
}
