import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import type { InstanceSpec, Json, Location, Observed, Offer, Owned, ResourceRequest, SideResource } from '../../core/provider';
import { vmNameOfOwnedName, type DeploymentOption } from '../deployment';
import { CloudAdapter, required } from '../cloud-adapter';
import { DEFAULT_BASE_URL, DoApi } from './api';
import { httpErrorOf } from '../http';
import { keyName, sameKey } from '../ssh-keys';
import {
  CLOUD,
  SSH_USER,
  deploymentVmTag,
  dropletBody,
  fingerprint,
  firewallBody,
  firewallName,
  identityTag,
  isForeign,
  ownerTag,
  toObserved,
  toOffers,
  vmNameOf,
} from './map';
import type { DoDroplet } from './api';
import { deleteEach } from '../delete-each';

export interface DigitalOceanOptions extends DeploymentOption {
  /** DIGITALOCEAN_TOKEN (or DIGITALOCEAN_ACCESS_TOKEN). */
  token?: string;
  /** Defaults to DIGITALOCEAN_API_URL, then https://api.digitalocean.com. */
  baseUrl?: string;
  /** Page size of lists (max 200). */
  perPage?: number;
}

/** What `prepare` returns and `create` reads back: the key fingerprints create passes, and the VM's firewall. */
const Prepared = z.object({ sshKeys: z.array(z.string()).min(1), firewallId: z.string().optional() });

/**
 * DigitalOcean droplets (GPU and CPU). Identity = tags `gpuprov-vm-name:<vm>` and
 * `gpuprov-owner:<deployment>` (both matched); the droplet is named `gpuprov-<vm>`. A per-VM cloud
 * firewall named `gpuprov-<vm>-<deployment hash>` covers the droplets carrying that name as a tag:
 * SSH in (plus 6443 when asked).
 */
export class DigitalOceanProvider extends CloudAdapter {
  private readonly api: DoApi;

  constructor(opts: DigitalOceanOptions = {}) {
    // openPorts: the per-VM firewall opens exactly the spec's ports (22, and 6443 when asked).
    super(CLOUD, opts, {
      bootScript: true,
      openPorts: true,
      sshUser: { kind: 'fixed', user: SSH_USER },
      bootTimeoutMs: 20 * 60_000,
      pollIntervalMs: 5_000,
      typicalBootMs: 3 * 60_000,
    });
    this.api = new DoApi(required(opts.token, 'digitalocean: no API token; set DIGITALOCEAN_TOKEN'), opts.baseUrl ?? DEFAULT_BASE_URL, opts.perPage ?? 200);
  }

  async plan(_req: ResourceRequest): Promise<Offer[]> {
    return toOffers(await this.api.sizes(), new Date().toISOString());
  }

  /**
   * Registers the worker's key (hash-named), and the VM's firewall unless one of that name
   * exists (idempotent); returns the fingerprints create passes. Other keys go in via cloud-init.
   */
  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    const key = spec.publicKeys[0];
    if (!key) throw new ProviderError('InvalidRequest', 'digitalocean: at least one SSH public key is required');
    const existing = await this.api.keys();
    if (!existing.some((k) => sameKey(k.public_key, key))) {
      try {
        await this.api.addKey(keyName(key), key);
      } catch (e) {
        // "SSH Key is already in use on your account": the same key is there, which is success.
        if (httpErrorOf(e)?.status !== 422) throw e;
      }
    }
    const firewallId = await this.ensureFirewall(spec);
    return { sshKeys: [fingerprint(key)], firewallId };
  }

  /** The VM's firewall, created once; it reaches droplets by the identity tag, made first. */
  private async ensureFirewall(spec: InstanceSpec): Promise<string> {
    const name = firewallName(spec.vmName, this.deployment);
    const tag = deploymentVmTag(spec.vmName, this.deployment);
    const existing = (await this.api.firewalls()).find((f) => f.name === name && f.tags.includes(tag));
    if (existing) return existing.id;
    await this.api.createTag(tag);
    return (await this.api.createFirewall(firewallBody(spec.vmName, this.deployment, spec.openPorts))).id;
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'digitalocean: prepared data is not from this adapter (create called without prepare?)');
    return String(await this.api.createDroplet(dropletBody(offer, spec, this.deployment, p.data.sshKeys)));
  }

  /** Droplets carrying `tag` in the region. */
  private async tagged(at: Location, tag: string): Promise<DoDroplet[]> {
    // Hazard: whether tag_name lists GPU droplets is undocumented, and tag_name cannot be combined
    // with type=gpus; list both and filter by tag client-side.
    const [tagged, gpus] = await Promise.all([this.api.dropletsByTag(tag), this.api.gpuDroplets()]);
    const byId = new Map([...tagged, ...gpus.filter((d) => d.tags.includes(tag))].map((d) => [d.id, d]));
    return [...byId.values()].filter((d) => d.region.slug === at.region);
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const mine = (await this.tagged(at, identityTag(vmName))).filter((d) => vmNameOf(d, this.deployment) !== undefined);
    return mine.flatMap((d) => toObserved(d, at) ?? []);
  }

  /** This deployment's droplets in the region: listed by the owner tag (plus the GPU list, as observe does). */
  async inventory(at: Location): Promise<Owned[]> {
    return (await this.tagged(at, ownerTag(this.deployment))).flatMap((d) => {
      const vmName = vmNameOf(d, this.deployment);
      const o = vmName === undefined ? undefined : toObserved(d, at);
      return o && vmName !== undefined ? [{ ...o, vmName }] : [];
    });
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const listed = await this.tagged(at, identityTag(vmName));
    const foreign = new Set(listed.filter((d) => isForeign(d, this.deployment)).map((d) => String(d.id)));
    const found = listed.filter((d) => vmNameOf(d, this.deployment) !== undefined).flatMap((d) => toObserved(d, at) ?? []);
    // "a destroy is already in progress" is success for an idempotent delete.
    await deleteEach(
      [...ids.filter((id) => !foreign.has(id)), ...found.map((o) => o.id)],
      (id) => this.api.deleteDroplet(id),
      (e) => {
        const http = httpErrorOf(e);
        return http?.status === 422 && /destroy is already in progress/i.test(JSON.stringify(http.body));
      },
    );
  }

  /** This deployment's per-VM cloud firewalls (account-wide: the same list for every region), by name and VM tag. */
  async sideInventory(_at: Location): Promise<SideResource[]> {
    return (await this.api.firewalls()).flatMap((f) => {
      const vmName = vmNameOfOwnedName(f.name, this.deployment);
      const mine = vmName !== undefined && f.name === firewallName(vmName, this.deployment) && f.tags.includes(deploymentVmTag(vmName, this.deployment));
      return mine ? [{ vmName, kind: 'firewall', id: f.id }] : [];
    });
  }

  /**
   * Deletes the VM's firewall(s) (gone = done). The key is shared and the identity tag stays:
   * deleting it while a droplet still carries it would strip its identity (a leak no teardown
   * could find); an unused tag bills nothing.
   */
  override async cleanup(_at: Location, vmName: string): Promise<void> {
    const name = firewallName(vmName, this.deployment);
    const tag = deploymentVmTag(vmName, this.deployment);
    const mine = (await this.api.firewalls()).filter((f) => f.name === name && f.tags.includes(tag));
    for (const f of mine) await this.api.deleteFirewall(f.id);
  }
}

/** The DigitalOcean provider when DIGITALOCEAN_TOKEN (or DIGITALOCEAN_ACCESS_TOKEN) is set, else undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): DigitalOceanProvider | undefined {
  const token = env.DIGITALOCEAN_TOKEN || env.DIGITALOCEAN_ACCESS_TOKEN;
  if (!token) return undefined;
  return new DigitalOceanProvider({ ...opts, token, ...(env.DIGITALOCEAN_API_URL ? { baseUrl: env.DIGITALOCEAN_API_URL } : {}) });
}
