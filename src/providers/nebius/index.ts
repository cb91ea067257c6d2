import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { renderCloudInit } from '../cloud-init';
import type { Capabilities, CloudProvider, InstanceSpec, Json, Location, Observed, Offer, ResourceRequest } from '../../core/provider';
import { NebiusApi, type CreateInstanceRequest } from './api';
import { CLOUD, SSH_USER, diskName, hasIdentity, identityLabels, instanceName, offersFor, platformsParent, priceAndOrder, splitInstanceType, toObserved } from './map';

/** Explicit configuration; {@link fromEnv} reads the same from `NEBIUS_*` variables. */
export interface NebiusOptions {
  /** IAM access token (`NEBIUS_IAM_TOKEN`, e.g. from `nebius iam get-access-token`). */
  token?: string;
  /** Region → project id. One project per region (projects are regional). */
  projects?: Record<string, string>;
  /** One `host:port` for every gRPC service (`NEBIUS_API_ENDPOINT`); tests point it at a fixture. */
  endpoint?: string;
  /** Plain-text gRPC: tests only. */
  insecure?: boolean;
  /** Subnet for the VMs (`NEBIUS_SUBNET_ID`); else the project's first subnet. */
  subnetId?: string;
  /** Boot image family (`NEBIUS_IMAGE_FAMILY`). */
  imageFamily?: string;
  /** Boot disk size (`NEBIUS_DISK_GIB`). */
  diskGiB?: number;
  timeoutMs?: number;
}

const Prepared = z.object({ projectId: z.string(), subnetId: z.string(), diskId: z.string() });

/** Nebius AI Cloud over gRPC (there is no REST compute API). */
class NebiusProvider implements CloudProvider {
  readonly name = CLOUD;
  private readonly api: NebiusApi;
  private readonly projects: Record<string, string>;

  constructor(private readonly opts: NebiusOptions) {
    if (!opts.token) throw new ProviderError('Credentials', 'nebius: no IAM token; set NEBIUS_IAM_TOKEN');
    if (!opts.projects || Object.keys(opts.projects).length === 0) {
      throw new ProviderError('Credentials', 'nebius: no project; set NEBIUS_PROJECT_ID (and NEBIUS_REGION) or NEBIUS_PROJECTS=region=project-id,...');
    }
    this.projects = opts.projects;
    this.api = new NebiusApi({ token: opts.token, ...(opts.endpoint ? { endpoint: opts.endpoint } : {}), ...(opts.insecure ? { insecure: true } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
  }

  capabilities(): Capabilities {
    return {
      bootScript: true,
      // Security groups are not managed here (?); the k3s API is reached through an SSH tunnel.
      openPorts: false,
      k8s: true,
      sshUser: { kind: 'fixed', user: SSH_USER },
      bootTimeoutMs: 20 * 60_000,
      pollIntervalMs: 10_000,
      typicalBootMs: 3 * 60_000,
    };
  }

  private project(region: string): string {
    const p = this.projects[region];
    if (!p) throw new ProviderError('InvalidRequest', `nebius: region "${region}" has no configured project (configured: ${Object.keys(this.projects).join(', ')})`);
    return p;
  }

  /** Every platform preset of the configured (or asked) regions, priced; `planOffers` keeps the ones that match. */
  async plan(req: ResourceRequest): Promise<Offer[]> {
    const regions = Object.keys(this.projects).filter((r) => !req.regions?.length || req.regions.includes(r));
    if (regions.length === 0) throw new ProviderError('InvalidRequest', `nebius: none of the regions ${req.regions?.join(', ')} is configured`);
    const offers: Offer[] = [];
    for (const region of regions) {
      const projectId = this.project(region);
      const regionOffers = offersFor(await this.api.listPlatforms(platformsParent(projectId)), region);
      if (regionOffers.length === 0) continue;
      const prices = await this.api
        .hourlyPrices(regionOffers.map((o) => ({ metadata: { parent_id: projectId, name: o.instanceType }, spec: { resources: splitInstanceType(o.instanceType) } })))
        // Prices are advisory: a calculator outage must not stop a launch, offers just stay unpriced.
        .catch(() => new Map<string, number>());
      offers.push(...priceAndOrder(regionOffers, prices));
    }
    if (offers.length === 0) throw new ProviderError('InvalidRequest', `nebius: no platform presets listed in ${regions.join(', ')}`);
    return offers;
  }

  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    const projectId = this.project(offer.region);
    const subnetId = this.opts.subnetId ?? (await this.api.firstSubnetId(projectId));
    if (!subnetId) throw new ProviderError('InvalidRequest', `nebius: project ${projectId} has no subnet; create a network or set NEBIUS_SUBNET_ID`);
    const name = diskName(spec.vmName);
    const existing = await this.api.getDiskByName(projectId, name);
    if (existing?.status?.state === 'ERROR') throw new ProviderError('Failed', `nebius: boot disk ${existing.metadata.id} is in ERROR`, { code: 'DISK_ERROR' });
    let diskId = existing?.metadata.id;
    if (!diskId) {
      const op = await this.api.createDisk({
        metadata: { parent_id: projectId, name, labels: identityLabels(spec.vmName, spec.owner) },
        spec: { size_gibibytes: this.opts.diskGiB ?? 200, type: 'NETWORK_SSD', source_image_family: { image_family: this.opts.imageFamily ?? 'ubuntu22.04-cuda12' } },
      });
      diskId = op.resource_id;
    }
    return { projectId, subnetId, diskId };
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'nebius: prepared data is not from this adapter');
    const { projectId, subnetId, diskId } = p.data;
    const name = instanceName(spec.vmName);
    const req: CreateInstanceRequest = {
      metadata: { parent_id: projectId, name, labels: identityLabels(spec.vmName, spec.owner) },
      spec: {
        resources: splitInstanceType(offer.instanceType),
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
    return all.filter((i) => hasIdentity(i, vmName)).map((i) => toObserved(i, at.region));
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const found = (await this.api.listInstances(this.project(at.region))).filter((i) => hasIdentity(i, vmName));
    const deleting = new Set(found.filter((i) => i.status?.state === 'DELETING').map((i) => i.metadata.id));
    const targets = new Set([...ids, ...found.map((i) => i.metadata.id)].filter((id) => id && !deleting.has(id)));
    for (const id of targets) await this.api.deleteInstance(id);
  }

  async cleanup(at: Location, vmName: string): Promise<void> {
    const disk = await this.api.getDiskByName(this.project(at.region), diskName(vmName));
    if (!disk || disk.status?.state === 'DELETING') return;
    await this.api.deleteDisk(disk.metadata.id);
  }
}

/** `NEBIUS_PROJECTS=eu-north1=project-e00…,us-central1=project-u00…` or `NEBIUS_PROJECT_ID` (+ `NEBIUS_REGION`). */
function projectsFromEnv(env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  if (env.NEBIUS_PROJECTS) {
    const pairs = env.NEBIUS_PROJECTS.split(',').map((s) => s.trim().split('=')).filter((kv): kv is [string, string] => kv.length === 2 && !!kv[0] && !!kv[1]);
    return Object.fromEntries(pairs);
  }
  if (env.NEBIUS_PROJECT_ID) return { [env.NEBIUS_REGION ?? 'eu-north1']: env.NEBIUS_PROJECT_ID };
  return undefined;
}

/** The Nebius adapter, or `undefined` when `NEBIUS_IAM_TOKEN` or a project is not configured. */
export function fromEnv(env: NodeJS.ProcessEnv): CloudProvider | undefined {
  const projects = projectsFromEnv(env);
  if (!env.NEBIUS_IAM_TOKEN || !projects || Object.keys(projects).length === 0) return undefined;
  const diskGiB = env.NEBIUS_DISK_GIB ? Number(env.NEBIUS_DISK_GIB) : undefined;
  return new NebiusProvider({
    token: env.NEBIUS_IAM_TOKEN,
    projects,
    ...(env.NEBIUS_API_ENDPOINT ? { endpoint: env.NEBIUS_API_ENDPOINT } : {}),
    ...(env.NEBIUS_SUBNET_ID ? { subnetId: env.NEBIUS_SUBNET_ID } : {}),
    ...(env.NEBIUS_IMAGE_FAMILY ? { imageFamily: env.NEBIUS_IMAGE_FAMILY } : {}),
    ...(diskGiB && Number.isFinite(diskGiB) ? { diskGiB } : {}),
  });
}

export { NebiusProvider };
