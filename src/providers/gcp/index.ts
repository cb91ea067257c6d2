/**
 * The GCP Compute Engine adapter: zonal instances named `gpuprov-<vm>-<deployment hash>` and
 * labelled with the VM identity and the deployment (both matched), a per-VM firewall rule of the
 * same name targeted by network tag, cloud-init through `user-data`. Spot (`--spot`): offers priced
 * from the Billing Catalog's Spot SKUs (./pricing.ts), the insert's scheduling (./map.ts), a stock-out
 * blocking only the spot offer (./errors.ts `forMarket`), preemptions read from the zone
 * operations (./preemption.ts). Reserved capacity: specific reservations as `reserved` offers
 * launched into by name (./reservations.ts), flex-start VMs as queued offers (./flex-start.ts).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { IDENTITY_TAG, OWNER_TAG } from '../../core/provider';
import type { InstanceSpec, Json, Location, Observed, Offer, Owned, QuotaShortfall, ResourceRequest, SideResource } from '../../core/provider';
import { vmNameOfOwnedName, type DeploymentOption } from '../deployment';
import { CloudAdapter } from '../cloud-adapter';
import { ComputeApi, operationFailure } from './api';
import { CATALOG } from './catalog';
import { findAdcFile, findProject, parseRegions, type GcpOptions } from './config';

export type { GcpOptions } from './config';
import { forMarket } from './errors';
import { flexStartFields, withQueued } from './flex-start';
import { reservationFields, reservedOffers } from './reservations';
import { deletedOnPreemption, withPreemptions } from './preemption';
import { GcpPricing } from './pricing';
import { stateDir } from '../../paths';
import {
  CLOUD,
  SSH_USER,
  identityFilter,
  instanceBody,
  labelValue,
  lastSegment,
  ownerFilter,
  quotaShortfallsOf,
  regionOfZone,
  requestIdFor,
  resourceName,
  toObserved,
  toOffers,
  zoneOf,
  type Prepared,
} from './map';

/** Stock Ubuntu for CPU offers. */
export const CPU_IMAGE = { project: 'ubuntu-os-cloud', family: 'ubuntu-2204-lts' } as const;
/** A Deep Learning VM family with the NVIDIA 570 driver and CUDA 12.8 baked in, for GPU offers. */
export const GPU_IMAGE = { project: 'deeplearning-platform-release', family: 'common-cu128-ubuntu-2204-nvidia-570' } as const;
/** Create waits this long for its insert operation: late stockouts and quota errors land within it. */
export const INSERT_WAIT_MS = 60_000;

const PreparedSchema = z.object({ firewall: z.string(), networkTag: z.string(), network: z.string(), image: z.string() });

/** GCP Compute Engine as a cloud adapter. */
export class GcpProvider extends CloudAdapter {
  private readonly api: ComputeApi;
  private readonly regions: string[];
  private readonly cpuImage: { project: string; family: string };
  private readonly gpuImage: { project: string; family: string };
  private readonly insertWaitMs: number;
  private readonly network: string;
  private readonly pricing: GcpPricing | undefined;

  /** Throws `Credentials` when the project or (outside a test endpoint) the credentials file is missing. */
  constructor(opts: GcpOptions) {
    super(CLOUD, opts, {
      bootScript: true,
      openPorts: true,
      sshUser: { kind: 'fixed', user: SSH_USER },
      bootTimeoutMs: 15 * 60_000,
      pollIntervalMs: 5_000,
      typicalBootMs: 60_000,
    });
    if (!opts.project) throw new ProviderError('Credentials', 'gcp: no project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT)');
    if (!opts.keyFilename && !opts.endpoint) {
      throw new ProviderError(
        'Credentials',
        'gcp: no Application Default Credentials: set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`',
      );
    }
    this.api = new ComputeApi({
      project: opts.project,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      ...(opts.keyFilename ? { keyFilename: opts.keyFilename } : {}),
      ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
    });
    this.regions = opts.regions?.length ? opts.regions : ['us-central1'];
    const billing = opts.billingEndpoint ?? (opts.endpoint ? false : undefined);
    this.pricing =
      billing === false
        ? undefined
        : new GcpPricing({
            ...(billing ? { endpoint: billing } : {}),
            // A fixture billing endpoint without a key file gets no token (like Compute's fixture).
            token: async () => (opts.keyFilename || !billing ? this.api.accessToken() : undefined),
            ...(opts.priceCacheFile ? { cacheFile: opts.priceCacheFile } : {}),
          });
    this.cpuImage = { project: opts.imageProject ?? CPU_IMAGE.project, family: opts.imageFamily ?? CPU_IMAGE.family };
    this.gpuImage = { project: opts.gpuImageProject ?? GPU_IMAGE.project, family: opts.gpuImageFamily ?? GPU_IMAGE.family };
    this.insertWaitMs = opts.insertWaitMs ?? INSERT_WAIT_MS;
    this.network = opts.network ?? 'default';
  }

  /**
   * Every ladder rung × the zones of the regions that can host it, cheapest first; `planOffers`
   * keeps the ones that match the request. A GPU ask reads only the GPU rungs (accelerator zones),
   * a CPU ask only the CPU rungs (zones that are UP): one vendor call either way. Prices come
   * from the Billing Catalog when it answers (cached daily), else from the dated ladder. With
   * `req.spot`, each offer whose spot price the catalog lists is followed by its spot twin (the
   * same catalog pages: no extra call). `--queue`: each flex-start type's offer is preceded by its
   * queued twin. `--reservation`: only the project's specific reservations (one aggregated list).
   * A capacity block (an AWS market) has no GCP offer.
   */
  async plan(req: ResourceRequest): Promise<Offer[]> {
    const ask = req.reserved;
    if (ask?.kind === 'reservation') {
      const all = await this.api.reservations();
      const regions = [...new Set(all.flatMap((r) => (r.zone ? [regionOfZone(lastSegment(r.zone))] : [])))];
      return reservedOffers(all, req, ask.id, regions.length ? await this.pricing?.lookup(regions, CATALOG) : undefined);
    }
    if (ask?.kind === 'capacity-block') return [];
    const offers = await this.planOrdinary(req);
    return ask?.kind === 'queue' ? withQueued(offers, ask.waitMs) : offers;
  }

  private async planOrdinary(req: ResourceRequest): Promise<Offer[]> {
    const regions = new Set(req.regions?.length ? req.regions : this.regions);
    const inRegions = (zone: string): boolean => regions.has(regionOfZone(zone));
    const rungs = [...CATALOG].filter((e) => (req.gpu ? e.gpuCount > 0 : e.gpuCount === 0)).sort((a, b) => a.pricePerHour - b.pricePerHour);
    const live = this.pricing?.lookup([...regions], CATALOG);
    // Live prices may reorder the rungs (stable: each rung's zones keep their order).
    const byPrice = (offers: Offer[]): Offer[] => offers.sort((a, b) => (a.pricePerHour ?? 0) - (b.pricePerHour ?? 0));
    if (req.gpu) {
      const [byZone, prices] = await Promise.all([this.api.acceleratorsByZone(), live]);
      const zonesFor = (e: (typeof rungs)[number]): string[] =>
        [...byZone].filter(([zone, types]) => inRegions(zone) && e.acceleratorType !== undefined && types.has(e.acceleratorType)).map(([zone]) => zone);
      return byPrice(toOffers(rungs, zonesFor, prices, req.spot !== undefined));
    }
    const [all, prices] = await Promise.all([this.api.listZones(), live]);
    const zones = all.filter((z) => (z.status ?? 'UP') === 'UP' && inRegions(z.name)).map((z) => z.name);
    return byPrice(toOffers(rungs, () => zones, prices, req.spot !== undefined));
  }

  /** Regional GPU quotas (`regions.get`, one call per region of a GPU offer): offers that cannot fit. */
  async quotaShortfalls(offers: readonly Offer[]): Promise<QuotaShortfall[]> {
    const regions = [...new Set(offers.filter((o) => o.gpu).map((o) => o.region))];
    const quotas = new Map(await Promise.all(regions.map(async (r) => [r, await this.api.regionQuotas(r)] as const)));
    return quotaShortfallsOf(offers, quotas);
  }

  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    const name = resourceName(spec.vmName, this.deployment);
    const image = await this.imageFor(offer, spec);
    const network = `projects/${this.api.project}/global/networks/${this.network}`;
    if (!(await this.api.getFirewall(name))) {
      const ports = ['22', ...(spec.openPorts.includes(6443) ? ['6443'] : [])];
      await this.api.insertFirewall({
        name,
        network,
        direction: 'INGRESS',
        priority: 1000,
        allowed: [{ IPProtocol: 'tcp', ports }],
        sourceRanges: ['0.0.0.0/0'],
        targetTags: [name],
        description: `gpuprov ${IDENTITY_TAG}=${labelValue(spec.vmName)} ${OWNER_TAG}=${labelValue(this.deployment)}`,
      });
    }
    const prepared: Prepared = { firewall: name, networkTag: name, network, image };
    return prepared;
  }

  /** The user's image (`--image`: a family is resolved to its newest image, an image path is used as is), else the default family. */
  private async imageFor(offer: Offer, spec: InstanceSpec): Promise<string> {
    const asked = spec.image && /projects\/([^/]+)\/global\/images\/(family\/)?([^/]+)$/.exec(spec.image);
    if (asked) return asked[2] ? this.api.imageFromFamily(asked[1]!, asked[3]!) : `projects/${asked[1]!}/global/images/${asked[3]!}`;
    if (spec.image) throw new ProviderError('InvalidRequest', `gcp: --image ${spec.image} is not an image family or image path`);
    const { project, family } = offer.gpu ? this.gpuImage : this.cpuImage;
    return this.api.imageFromFamily(project, family);
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    try {
      return await this.insert(offer, prepared, spec);
    } catch (err) {
      throw forMarket(err, offer.market, offer.queued);
    }
  }

  private async insert(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const zone = zoneOf(offer);
    const parsed = PreparedSchema.safeParse(prepared);
    if (!parsed.success) throw new ProviderError('InvalidRequest', 'gcp: create needs the JSON returned by prepare');
    const body = { ...instanceBody(this.api.project, offer, parsed.data, spec, this.deployment), ...reservationFields(offer), ...flexStartFields(offer) };
    const inserted = await this.api.insertInstance(zone, body, requestIdFor(spec.idempotencyKey));
    if (inserted === 'exists') return this.adopt(zone, spec);
    // Stockouts (ZONE_RESOURCE_POOL_EXHAUSTED) and quota errors arrive on the operation, often
    // tens of seconds after the insert: wait for it here, so they fail this attempt with their
    // kind and scope. Past the budget the instance is observed like any other (still bounded).
    const op = inserted.status === 'DONE' ? inserted : await this.api.waitZoneOperation(zone, inserted.name, this.insertWaitMs);
    const failure = operationFailure(op);
    if (failure?.code === 'RESOURCE_ALREADY_EXISTS') return this.adopt(zone, spec);
    if (failure) throw failure;
    return op.targetId ?? resourceName(spec.vmName, this.deployment);
  }

  private mine(i: { labels?: Record<string, string> | null | undefined }, vmName: string): boolean {
    return i.labels?.[IDENTITY_TAG] === labelValue(vmName) && i.labels[OWNER_TAG] === labelValue(this.deployment);
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const zone = zoneOf(at);
    const found = (await this.api.listInstances(zone, identityFilter(vmName))).filter((i) => this.mine(i, vmName));
    const observed = found.map((i) => toObserved(i, { ...at, region: regionOfZone(zone), zone }));
    // Only a Spot VM is preempted: observing an on-demand one costs no extra call.
    if (!found.some((i) => i.scheduling?.provisioningModel === 'SPOT')) return observed;
    return withPreemptions(observed, await this.api.zonePreemptions(zone));
  }

  /**
   * This deployment's instances (owner label filter) in `at.zone`; without a zone, in every zone of
   * the region (the zone list, then one paged list per zone: Compute lists instances per zone),
   * and every zone's preemptions in one paged call: preempted instances carry `preemption`, and
   * ours deleted on preemption in the last minutes are listed `Terminating` (./preemption.ts).
   */
  async inventory(at: Location): Promise<Owned[]> {
    const zones = at.zone ? [at.zone] : (await this.api.listZones()).map((z) => z.name).filter((z) => regionOfZone(z) === at.region);
    const owned: Owned[] = [];
    for (const zone of zones) {
      for (const i of await this.api.listInstances(zone, ownerFilter(this.deployment))) {
        const vmName = i.labels?.[IDENTITY_TAG];
        if (vmName === undefined || i.labels?.[OWNER_TAG] !== labelValue(this.deployment)) continue;
        owned.push({ ...toObserved(i, { cloud: CLOUD, region: regionOfZone(zone), zone }), vmName });
      }
    }
    const ops = await this.api.preemptions();
    const inZone = (z: string): boolean => (at.zone ? z === at.zone : regionOfZone(z) === at.region);
    const gone = deletedOnPreemption(ops, new Set(owned.map((o) => o.id)), inZone, at.region, this.deployment, Date.now());
    return [...withPreemptions(owned, ops), ...gone];
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const zone = zoneOf(at);
    const found = await this.api.listInstances(zone, identityFilter(vmName));
    const targets = new Set(found.filter((i) => this.mine(i, vmName)).map((i) => i.name));
    const foreign = new Set(found.filter((i) => !this.mine(i, vmName)).flatMap((i) => [i.name, i.id]));
    for (const id of ids) {
      // A numeric id not listed under the identity is already gone; names are deleted as given
      // (Compute paths take names; 404 = gone), never another deployment's.
      if (!/^\d+$/.test(id) && !found.some((i) => i.id === id) && !foreign.has(id)) targets.add(id);
    }
    for (const name of targets) await this.api.deleteInstance(zone, name);
  }

  override async cleanup(_at: Location, vmName: string): Promise<void> {
    await this.api.deleteFirewall(resourceName(vmName, this.deployment));
  }

  /** This deployment's per-VM firewall rules (global: the same list for every region), by the VM name in their name. */
  async sideInventory(_at: Location): Promise<SideResource[]> {
    return (await this.api.listFirewalls('gpuprov-')).flatMap((fw) => {
      const vmName = vmNameOfOwnedName(fw.name, this.deployment);
      return vmName === undefined ? [] : [{ vmName, kind: 'firewall', id: fw.name }];
    });
  }

  /** The instance already named `gpuprov-<vm>-<deployment hash>` in the zone: ours (same owner label) → its id. */
  private async adopt(zone: string, spec: InstanceSpec): Promise<string> {
    const name = resourceName(spec.vmName, this.deployment);
    const inst = await this.api.getInstance(zone, name);
    if (!inst) throw new ProviderError('Transient', `gcp: ${name} exists in ${zone} but could not be read yet`);
    if (inst.labels?.[OWNER_TAG] !== labelValue(this.deployment)) {
      throw new ProviderError(
        'InvalidRequest',
        `gcp: instance ${name} in ${zone} belongs to another deployment (${OWNER_TAG}=${inst.labels?.[OWNER_TAG] ?? 'none'})`,
      );
    }
    return inst.id;
  }
}

/**
 * The GCP adapter from the environment, or `undefined` when no project or no credentials are
 * found. `GCP_COMPUTE_ENDPOINT` (tests) stands in for credentials.
 */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): GcpProvider | undefined {
  const keyFilename = findAdcFile(env);
  const project = findProject(env, keyFilename);
  const endpoint = env.GCP_COMPUTE_ENDPOINT;
  if (!project || (!keyFilename && !endpoint)) return undefined;
  return new GcpProvider({
    ...opts,
    project,
    regions: parseRegions(env.GCP_REGIONS),
    ...(keyFilename ? { keyFilename } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(env.GCP_IMAGE_FAMILY ? { imageFamily: env.GCP_IMAGE_FAMILY } : {}),
    ...(env.GCP_IMAGE_PROJECT ? { imageProject: env.GCP_IMAGE_PROJECT } : {}),
    ...(env.GCP_GPU_IMAGE_FAMILY ? { gpuImageFamily: env.GCP_GPU_IMAGE_FAMILY } : {}),
    ...(env.GCP_GPU_IMAGE_PROJECT ? { gpuImageProject: env.GCP_GPU_IMAGE_PROJECT } : {}),
    ...(env.GCP_NETWORK ? { network: env.GCP_NETWORK } : {}),
    ...(env.GCP_BILLING_ENDPOINT ? { billingEndpoint: env.GCP_BILLING_ENDPOINT } : {}),
    priceCacheFile: join(stateDir(env), 'prices', 'gcp.json'),
  });
}
