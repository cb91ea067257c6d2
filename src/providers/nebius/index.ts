import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { renderCloudInit } from '../cloud-init';
import type { InstanceSpec, Json, Location, Observed, Offer, Owned, ResourceRequest, SideResource } from '../../core/provider';
import type { DeploymentOption } from '../deployment';
import { CloudAdapter, VM_BOOT } from '../cloud-adapter';
import { NebiusApi, type CreateInstanceRequest, type Disk, type NebiusApiOptions } from './api';
import { readServiceAccountFile, type ServiceAccountKey } from './auth';
import { reservationPolicy, reservedOffers } from './reservations';
import {
  CLOUD,
  PREEMPTIBLE,
  SSH_USER,
  diskName,
  hasIdentity,
  identityLabels,
  isForeign,
  instanceName,
  offersFor,
  platformsParent,
  priceAndOrder,
  splitInstanceType,
  spotPlatforms,
  spotTwins,
  toObserved,
  vmNameOf,
  vmNameOfDisk,
  type MarketPrices,
} from './map';

/**
 * Explicit configuration; {@link fromEnv} reads the same from `NEBIUS_*` variables. The connection
 * and timing options (`endpoint`, `insecure`, timeouts, clock) are {@link NebiusApi}'s, passed through.
 */
export interface NebiusOptions extends DeploymentOption, Omit<NebiusApiOptions, 'auth'> {
  /** IAM access token (`NEBIUS_IAM_TOKEN`, e.g. from `nebius iam get-access-token`); expires within hours. */
  token?: string;
  /** A service account's key (`NEBIUS_SERVICE_ACCOUNT_FILE`), exchanged for IAM tokens that are renewed before expiry. */
  serviceAccount?: ServiceAccountKey;
  /** Region → project id. One project per region (projects are regional). */
  projects?: Record<string, string>;
  /** Subnet for the VMs (`NEBIUS_SUBNET_ID`); else the project's first subnet. */
  subnetId?: string;
  /** Boot image family (`NEBIUS_IMAGE_FAMILY`). */
  imageFamily?: string;
  /** Boot disk size (`NEBIUS_DISK_GIB`). */
  diskGiB?: number;
  /** Where warnings go (a calculator failure leaves offers unpriced); default `console.warn`. */
  warn?: (message: string) => void;
}

/** Disk states a boot disk can be reused in; ERROR and BROKEN are replaced, DELETING waited out. */
const DISK_USABLE = new Set(['UNSPECIFIED', 'CREATING', 'READY', 'UPDATING']);

const Prepared = z.object({ projectId: z.string(), subnetId: z.string(), diskId: z.string() });

/** Nebius AI Cloud over gRPC (there is no REST compute API). */
class NebiusProvider extends CloudAdapter {
  private readonly api: NebiusApi;
  private readonly projects: Record<string, string>;

  constructor(private readonly opts: NebiusOptions) {
    // openPorts: security groups are not managed here; the k3s API is reached through an SSH tunnel.
    super(CLOUD, opts, { bootScript: true, openPorts: false, sshUser: { kind: 'fixed', user: SSH_USER }, ...VM_BOOT, typicalBootMs: 3 * 60_000 });
    if (!opts.token && !opts.serviceAccount)
      throw new ProviderError('Credentials', 'nebius: no credentials; set NEBIUS_SERVICE_ACCOUNT_FILE or NEBIUS_IAM_TOKEN');
    if (!opts.projects || Object.keys(opts.projects).length === 0) {
      throw new ProviderError('Credentials', 'nebius: no project; set NEBIUS_PROJECT_ID (and NEBIUS_REGION) or NEBIUS_PROJECTS=region=project-id,...');
    }
    this.projects = opts.projects;
    const { endpoint, insecure, timeoutMs, operationWaitMs, operationPollMs, now, sleep } = opts;
    const tuning = Object.fromEntries(
      Object.entries({ endpoint, insecure, timeoutMs, operationWaitMs, operationPollMs, now, sleep }).filter(([, v]) => v !== undefined),
    );
    const auth = opts.serviceAccount ? { serviceAccount: opts.serviceAccount } : { token: opts.token! };
    this.api = new NebiusApi({ auth, ...tuning });
  }

  private project(region: string): string {
    const p = this.projects[region];
    if (!p)
      throw new ProviderError('InvalidRequest', `nebius: region "${region}" has no configured project (configured: ${Object.keys(this.projects).join(', ')})`);
    return p;
  }

  /**
   * Every platform preset of the configured (or asked) regions, priced; `planOffers` keeps the ones
   * that match. With `req.spot`, also the spot offer of each preset whose platform takes preemptible
   * VMs, priced by a second calculator call (without it, the calls on-demand plans always made).
   * A reservation ask plans the project's capacity block groups instead (./reservations.ts).
   */
  async plan(req: ResourceRequest): Promise<Offer[]> {
    const regions = Object.keys(this.projects).filter((r) => !req.regions?.length || req.regions.includes(r));
    if (regions.length === 0) throw new ProviderError('InvalidRequest', `nebius: none of the regions ${req.regions?.join(', ')} is configured`);
    const offers: Offer[] = [];
    for (const region of regions) offers.push(...(await this.regionOffers(region, req)));
    // No group to launch into is an empty plan, not a cloud without presets.
    if (offers.length === 0 && !req.reserved) throw new ProviderError('InvalidRequest', `nebius: no platform presets listed in ${regions.join(', ')}`);
    return offers;
  }

  private async regionOffers(region: string, req: ResourceRequest): Promise<Offer[]> {
    const projectId = this.project(region);
    const platforms = await this.api.listPlatforms(platformsParent(projectId));
    const onDemand = offersFor(platforms, region);
    if (onDemand.length === 0) return [];
    const spot = req.spot ? spotTwins(onDemand, spotPlatforms(platforms)) : [];
    const pricedAt = new Date().toISOString();
    const onDemandPrices = await this.prices(region, projectId, onDemand, false);
    const spotPrices = spot.length > 0 ? await this.prices(region, projectId, spot, true) : undefined;
    const offers = priceAndOrder([...onDemand, ...spot], pricedAt, onDemandPrices, spotPrices);
    // A reservation ask plans its capacity block groups only (./reservations.ts); Nebius sells no block.
    if (req.reserved?.kind === 'reservation') return reservedOffers(await this.api.listCapacityBlockGroups(projectId), offers, region, req);
    return req.reserved?.kind === 'capacity-block' ? [] : offers;
  }

  /** Prices are advisory: a calculator failure must not stop a launch; the offers stay unpriced, saying why. */
  private async prices(region: string, projectId: string, offers: Offer[], spot: boolean): Promise<MarketPrices> {
    const reqs = offers.map((o) => ({
      metadata: { parent_id: projectId, name: o.instanceType },
      spec: { resources: splitInstanceType(o.instanceType), ...(spot ? PREEMPTIBLE : {}) },
    }));
    try {
      return { prices: await this.api.hourlyPrices(reqs) };
    } catch (e) {
      const pe = e as ProviderError;
      (this.opts.warn ?? console.warn)(`nebius: ${region}: ${spot ? 'spot ' : ''}offers unpriced: ${pe.kind}: ${pe.message}`);
      return { prices: new Map(), error: `${pe.kind}: ${pe.message}` };
    }
  }

  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    const projectId = this.project(offer.region);
    const subnetId = this.opts.subnetId ?? (await this.api.firstSubnetId(projectId));
    if (!subnetId) throw new ProviderError('InvalidRequest', `nebius: project ${projectId} has no subnet; create a network or set NEBIUS_SUBNET_ID`);
    const name = diskName(spec.vmName, this.deployment);
    let diskId = await this.usableDisk(await this.api.getDiskByName(projectId, name));
    if (!diskId) {
      const op = await this.api.createDisk({
        metadata: { parent_id: projectId, name, labels: identityLabels(spec.vmName, this.deployment) },
        spec: {
          // `--disk-gb` and `--image` (an image family) first, then the worker's settings.
          size_gibibytes: spec.diskGb ?? this.opts.diskGiB ?? 200,
          type: 'NETWORK_SSD',
          source_image_family: { image_family: spec.image ?? this.opts.imageFamily ?? 'ubuntu22.04-cuda12' },
        },
      });
      diskId = op.resource_id;
    }
    return { projectId, subnetId, diskId };
  }

  /**
   * The id of a boot disk left by an earlier attempt that can still boot, or `undefined` when a new
   * one is needed. A disk in ERROR or BROKEN is deleted first (never reused); one still deleting,
   * or whose deletion outlasts the operation wait, fails the attempt as Transient.
   */
  private async usableDisk(disk: Disk | undefined): Promise<string | undefined> {
    if (!disk) return undefined;
    const state = disk.status?.state ?? 'UNSPECIFIED';
    if (DISK_USABLE.has(state)) return disk.metadata.id;
    if (state === 'DELETING' || !(await this.api.deleteDisk(disk.metadata.id).then((op) => !op || op.status))) {
      throw new ProviderError('Transient', `nebius: boot disk ${disk.metadata.id} (was ${state}) is still being deleted`, { code: 'DISK_DELETING' });
    }
    return undefined;
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'nebius: prepared data is not from this adapter');
    const { projectId, subnetId, diskId } = p.data;
    const name = instanceName(spec.vmName, this.deployment);
    const req: CreateInstanceRequest = {
      metadata: { parent_id: projectId, name, labels: identityLabels(spec.vmName, this.deployment) },
      spec: {
        resources: splitInstanceType(offer.instanceType),
        // A spot offer: a preemptible VM at the current spot price (map.ts header).
        ...(offer.market === 'spot' ? PREEMPTIBLE : {}),
        ...reservationPolicy(offer),
        boot_disk: { attach_mode: 'READ_WRITE', existing_disk: { id: diskId } },
        network_interfaces: [{ name: 'eth0', subnet_id: subnetId, ip_address: {}, public_ip_address: {} }],
        cloud_init_user_data: renderCloudInit(spec.bootScript, spec.publicKeys),
        hostname: name,
      },
    };
    // (?) Nebius honours an x-idempotency-key header on write calls; instance names are unique per project anyway.
    const key = createHash('sha256').update(spec.idempotencyKey).digest('hex').slice(0, 32);
    const res = await this.api.createInstance(req, key);
    if ('op' in res) return res.op.resource_id;
    // Name clash: the instance of this VM already exists (a retried create); adopt it.
    const id = res.existingId ?? (await this.api.getInstanceByName(projectId, name))?.metadata.id;
    if (!id) throw new ProviderError('Transient', `nebius: instance name ${name} is taken but the instance is not visible yet`);
    return id;
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const all = await this.api.listInstances(this.project(at.region));
    const seenAt = new Date().toISOString();
    return all.filter((i) => hasIdentity(i, vmName, this.deployment)).map((i) => toObserved(i, at.region, seenAt));
  }

  async inventory(at: Location): Promise<Owned[]> {
    const all = await this.api.listInstances(this.project(at.region));
    const seenAt = new Date().toISOString();
    return all.flatMap((i) => {
      const vmName = vmNameOf(i, this.deployment);
      return vmName === undefined ? [] : [{ ...toObserved(i, at.region, seenAt), vmName }];
    });
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const all = await this.api.listInstances(this.project(at.region));
    const found = all.filter((i) => hasIdentity(i, vmName, this.deployment));
    const foreign = new Set(all.filter((i) => isForeign(i, this.deployment)).map((i) => i.metadata.id));
    const deleting = new Set(found.filter((i) => i.status?.state === 'DELETING').map((i) => i.metadata.id));
    const targets = new Set([...ids.filter((id) => !foreign.has(id)), ...found.map((i) => i.metadata.id)].filter((id) => id && !deleting.has(id)));
    for (const id of targets) await this.api.deleteInstance(id);
  }

  /** This deployment's boot disks in the region's project (one List), by the VM name on their labels. */
  async sideInventory(at: Location): Promise<SideResource[]> {
    return (await this.api.listDisks(this.project(at.region))).flatMap((d) => {
      const vmName = vmNameOfDisk(d, this.deployment);
      return vmName === undefined ? [] : [{ vmName, kind: 'boot-disk', id: d.metadata.id }];
    });
  }

  override async cleanup(at: Location, vmName: string): Promise<void> {
    const disk = await this.api.getDiskByName(this.project(at.region), diskName(vmName, this.deployment));
    if (!disk || disk.status?.state === 'DELETING') return;
    await this.api.deleteDisk(disk.metadata.id);
  }
}

/** `NEBIUS_PROJECTS=eu-north1=project-e00…,us-central1=project-u00…` or `NEBIUS_PROJECT_ID` (+ `NEBIUS_REGION`). */
function projectsFromEnv(env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  if (env.NEBIUS_PROJECTS) {
    const pairs = env.NEBIUS_PROJECTS.split(',')
      .map((s) => s.trim().split('='))
      .filter((kv): kv is [string, string] => kv.length === 2 && !!kv[0] && !!kv[1]);
    return Object.fromEntries(pairs);
  }
  if (env.NEBIUS_PROJECT_ID) return { [env.NEBIUS_REGION ?? 'eu-north1']: env.NEBIUS_PROJECT_ID };
  return undefined;
}

/**
 * The Nebius adapter, or `undefined` when no credentials (`NEBIUS_SERVICE_ACCOUNT_FILE`, else
 * `NEBIUS_IAM_TOKEN`) or no project is configured. An unreadable key file throws (Credentials).
 */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): NebiusProvider | undefined {
  const projects = projectsFromEnv(env);
  if ((!env.NEBIUS_IAM_TOKEN && !env.NEBIUS_SERVICE_ACCOUNT_FILE) || !projects || Object.keys(projects).length === 0) return undefined;
  const diskGiB = env.NEBIUS_DISK_GIB ? Number(env.NEBIUS_DISK_GIB) : undefined;
  return new NebiusProvider({
    ...opts,
    ...(env.NEBIUS_SERVICE_ACCOUNT_FILE ? { serviceAccount: readServiceAccountFile(env.NEBIUS_SERVICE_ACCOUNT_FILE) } : { token: env.NEBIUS_IAM_TOKEN! }),
    projects,
    ...(env.NEBIUS_API_ENDPOINT ? { endpoint: env.NEBIUS_API_ENDPOINT } : {}),
    ...(env.NEBIUS_SUBNET_ID ? { subnetId: env.NEBIUS_SUBNET_ID } : {}),
    ...(env.NEBIUS_IMAGE_FAMILY ? { imageFamily: env.NEBIUS_IMAGE_FAMILY } : {}),
    ...(diskGiB && Number.isFinite(diskGiB) ? { diskGiB } : {}),
  });
}

export { NebiusProvider };
