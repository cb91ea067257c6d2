import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { renderCloudInit } from '../cloud-init';
import { identityName, type InstanceSpec, type Json, type Location, type Observed, type Offer, type Owned, type ResourceRequest } from '../../core/provider';
import type { DeploymentOption } from '../deployment';
import { CloudAdapter, VM_BOOT, required } from '../cloud-adapter';
import { keyName } from '../ssh-keys';
import { DEFAULT_BASE_URL, HyperstackApi } from './api';
import { httpErrorOf } from '../http';
import { CLOUD, SSH_USER, environmentFor, hasIdentity, identityLabels, isForeign, toObserved, toOffers, vmNameOf } from './map';
import { deleteEach } from '../delete-each';

export interface HyperstackOptions extends DeploymentOption {
  /** HYPERSTACK_API_KEY. */
  apiKey?: string;
  /** Defaults to HYPERSTACK_API_URL, then the public API. */
  baseUrl?: string;
  /** Image name (HYPERSTACK_IMAGE). */
  image?: string;
  /** Page size of VM listings. */
  pageSize?: number;
}

const DEFAULT_IMAGE = 'Ubuntu Server 22.04 LTS R535 CUDA 12.2';

/** What `prepare` returns and `create` reads back. */
const Prepared = z.object({ environment: z.string().min(1), keyName: z.string().min(1) });

/**
 * Hyperstack (NexGen Cloud) VMs. One environment per region (`gpuprov-<region>`) holds the
 * hashed-name key pair; VMs are named `gpuprov-<vm>` and labelled with the identity and the deployment
 * (matched on both: another deployment's `gpuprov-<vm>` is invisible).
 */
export class HyperstackProvider extends CloudAdapter {
  private readonly api: HyperstackApi;
  private readonly image: string;
  private readonly pageSize: number;

  constructor(opts: HyperstackOptions = {}) {
    super(CLOUD, opts, { bootScript: true, openPorts: true, sshUser: { kind: 'fixed', user: SSH_USER }, ...VM_BOOT, typicalBootMs: 4 * 60_000 });
    this.api = new HyperstackApi(required(opts.apiKey, 'hyperstack: no API key; set HYPERSTACK_API_KEY'), opts.baseUrl ?? DEFAULT_BASE_URL);
    this.image = opts.image ?? DEFAULT_IMAGE;
    this.pageSize = opts.pageSize ?? 100;
  }

  async plan(_req: ResourceRequest): Promise<Offer[]> {
    const [flavors, prices] = await Promise.all([this.api.flavors(), this.api.pricebook()]);
    return toOffers(flavors, prices, new Date().toISOString());
  }

  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    const key = spec.publicKeys[0];
    if (!key) throw new ProviderError('InvalidRequest', 'hyperstack: at least one SSH public key is required');
    const environment = environmentFor(offer.region);
    const name = keyName(key);
    const envs = await this.api.environments();
    if (!envs.some((e) => e.name === environment)) await this.createIgnoringConflict(() => this.api.createEnvironment(environment, offer.region));
    const keys = await this.api.keypairs();
    if (!keys.some((k) => k.name === name && (k.environment === undefined || k.environment === environment))) {
      // A clash on a hash-derived name means the same key is already there: success.
      await this.createIgnoringConflict(() => this.api.createKeypair(name, environment, key));
    }
    return { environment, keyName: name } satisfies z.infer<typeof Prepared>;
  }

  private async createIgnoringConflict(create: () => Promise<void>): Promise<void> {
    try {
      await create();
    } catch (e) {
      if (httpErrorOf(e)?.status === 409) return;
      throw e;
    }
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'hyperstack: prepared data is not from this adapter (create called without prepare?)');
    const name = identityName(spec.vmName);
    if (name.length > 50) throw new ProviderError('InvalidRequest', `hyperstack: VM name "${name}" is longer than 50 characters`);
    const ports = [...new Set([22, ...spec.openPorts])];
    const id = await this.api.createVm({
      name,
      environment_name: p.data.environment,
      image_name: spec.image ?? this.image,
      flavor_name: offer.instanceType,
      key_name: p.data.keyName,
      count: 1,
      user_data: renderCloudInit(spec.bootScript, spec.publicKeys),
      labels: identityLabels(spec.vmName, this.deployment),
      assign_floating_ip: true,
      // Port randomization would remap 22 to a random port.
      enable_port_randomization: false,
      security_rules: ports.map((port) => ({
        direction: 'ingress',
        protocol: 'tcp',
        ethertype: 'IPv4',
        remote_ip_prefix: '0.0.0.0/0',
        port_range_min: port,
        port_range_max: port,
      })),
    });
    return String(id);
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const environment = environmentFor(at.region);
    // `search` may match by substring: filter by the exact identity client-side.
    const vms = await this.api.listVms(environment, identityName(vmName), this.pageSize);
    return vms.filter((v) => hasIdentity(v, vmName, this.deployment, environment)).flatMap((v) => toObserved(v, at) ?? []);
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const environment = environmentFor(at.region);
    const vms = await this.api.listVms(environment, identityName(vmName), this.pageSize);
    const foreign = new Set(vms.filter((v) => isForeign(v, this.deployment)).map((v) => String(v.id)));
    const found = vms.filter((v) => hasIdentity(v, vmName, this.deployment, environment)).flatMap((v) => toObserved(v, at) ?? []);
    const targets = [...ids.filter((id) => !foreign.has(id)), ...found.filter((o) => o.status !== 'Terminating').map((o) => o.id)];
    await deleteEach(targets, (id) => this.api.deleteVm(id));
  }

  /** Every VM of the region's environment named `gpuprov-…` (one paged search), kept when labelled with this deployment. */
  async inventory(at: Location): Promise<Owned[]> {
    const environment = environmentFor(at.region);
    const owned: Owned[] = [];
    for (const v of await this.api.listVms(environment, 'gpuprov-', this.pageSize)) {
      const vmName = vmNameOf(v, this.deployment);
      const o = vmName !== undefined && hasIdentity(v, vmName, this.deployment, environment) ? toObserved(v, at) : undefined;
      if (o && vmName !== undefined) owned.push({ ...o, vmName });
    }
    return owned;
  }
}

/** The Hyperstack provider when HYPERSTACK_API_KEY is set, else undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): HyperstackProvider | undefined {
  const apiKey = env.HYPERSTACK_API_KEY;
  if (!apiKey) return undefined;
  return new HyperstackProvider({
    ...opts,
    apiKey,
    ...(env.HYPERSTACK_API_URL ? { baseUrl: env.HYPERSTACK_API_URL } : {}),
    ...(env.HYPERSTACK_IMAGE ? { image: env.HYPERSTACK_IMAGE } : {}),
  });
}
