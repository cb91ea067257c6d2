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
/** Available (location × type) pairs, cheapest first (prices are USD: `currency=usd`); `planOffers` keeps the ones that match the request. */
export function toOffers(types: VerdaType[], avail: VerdaAvailability, image: string, pricedAt: string): Offer[] {
  const byName = new Map(types.map((t) => [t.instance_type, t]));
  const offers: Offer[] = [];
  for (const loc of avail) {
    for (const name of loc.availabilities) {
      const t = byName.get(name);
      if (!t) continue;
      offers.push({
        cloud: CLOUD,
        region: loc.location_code,
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
        pricePerHour: t.price_per_hour,
        currency: 'USD',
        priceSource: 'api',
        pricedAt,
        extra: { image },
      });
    }
  }
  return offers.sort((a, b) => (a.pricePerHour ?? Infinity) - (b.pricePerHour ?? Infinity));
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
  return {
    instance_type: offer.instanceType,
    image: spec.image ?? (typeof extra?.image === 'string' ? extra.image : defaultImage),
    ssh_key_ids: prepared.sshKeyIds,
    ...(prepared.startupScriptId ? { startup_script_id: prepared.startupScriptId } : {}),
    hostname: identityName(spec.vmName),
    description: description(spec.vmName, deployment),
    location_code: offer.region,
    is_spot: false,
    // `--disk-gb`: the OS volume's size (the verda client's OSVolume: name and size in GB).
    ...(spec.diskGb !== undefined ? { os_volume: { name: `${identityName(spec.vmName)}-os`, size: spec.diskGb } } : {}),
  };
}
