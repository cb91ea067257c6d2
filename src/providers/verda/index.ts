import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { renderShellScript } from '../cloud-init';
import type { InstanceSpec, Json, Location, Observed, Offer, Owned, ResourceRequest, SideResource } from '../../core/provider';
import { vmNameOfOwnedName, type DeploymentOption } from '../deployment';
import { CloudAdapter, VM_BOOT, required } from '../cloud-adapter';
import { httpErrorOf } from '../http';
import { keyName, sameKey } from '../ssh-keys';
import { DEFAULT_BASE_URL, VerdaApi, type VerdaInstance } from './api';
import { ALREADY_GONE, vendorError } from './errors';
import { CLOUD, SSH_USER, hasIdentity, instanceBody, isForeign, isScriptOf, reclaimedSpot, scriptName, toObserved, toOffers, vmNameOf } from './map';
import { deleteEach } from '../delete-each';

export interface VerdaOptions extends DeploymentOption {
  /** VERDA_CLIENT_ID. */
  clientId?: string;
  /** VERDA_CLIENT_SECRET. */
  clientSecret?: string;
  /** Defaults to VERDA_API_URL, then https://api.verda.com/v1. */
  baseUrl?: string;
  /** OS image slug (VERDA_IMAGE). */
  image?: string;
}

const DEFAULT_IMAGE = 'ubuntu-24.04-cuda-12.8-open-docker';

/** What `prepare` returns and `create` reads back: key ids and the startup script (if any). */
const Prepared = z.object({ sshKeyIds: z.array(z.string()), startupScriptId: z.string().nullable() });

/**
 * Verda (formerly DataCrunch) VMs. No tags: hostname `gpuprov-<vm>` plus a description with the
 * identity and deployment labels (both matched). The boot script is a per-VM startup-script resource made in prepare and
 * removed in cleanup.
 */
export class VerdaProvider extends CloudAdapter {
  private readonly api: VerdaApi;
  private readonly image: string;

  constructor(opts: VerdaOptions = {}) {
    // openPorts: there is no firewall API: instances are reachable on every port.
    super(CLOUD, opts, { bootScript: true, openPorts: true, sshUser: { kind: 'fixed', user: SSH_USER }, ...VM_BOOT, typicalBootMs: 4 * 60_000 });
    this.api = new VerdaApi(
      required(opts.clientId, 'verda: no client id; set VERDA_CLIENT_ID'),
      required(opts.clientSecret, 'verda: no client secret; set VERDA_CLIENT_SECRET'),
      opts.baseUrl ?? DEFAULT_BASE_URL,
    );
    this.image = opts.image ?? DEFAULT_IMAGE;
  }

  /** On-demand offers; with `req.spot`, the spot offers too (one more call: the spot stock). */
  async plan(req: ResourceRequest): Promise<Offer[]> {
    const [types, avail, spotAvail] = await Promise.all([
      this.api.instanceTypes(),
      this.api.availability(),
      req.spot ? this.api.availability(true) : Promise.resolve(undefined),
    ]);
    return toOffers(types, avail, this.image, new Date().toISOString(), spotAvail);
  }

  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    if (spec.publicKeys.length === 0) throw new ProviderError('InvalidRequest', 'verda: at least one SSH public key is required');
    const keys = await this.api.sshKeys();
    const sshKeyIds: string[] = [];
    for (const pub of spec.publicKeys) {
      const found = keys.find((k) => k.name === keyName(pub) || (k.key !== undefined && sameKey(k.key, pub)));
      sshKeyIds.push(found ? found.id : await this.api.addSshKey(keyName(pub), pub));
    }
    let startupScriptId: string | null = null;
    if (spec.bootScript) {
      const script = renderShellScript(spec.bootScript);
      const name = scriptName(spec.vmName, this.deployment, script);
      const existing = (await this.api.scripts()).find((s) => s.name === name);
      startupScriptId = existing ? existing.id : await this.api.addScript(name, script);
    }
    return { sshKeyIds, startupScriptId } satisfies z.infer<typeof Prepared>;
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'verda: prepared data is not from this adapter (create called without prepare?)');
    return this.api.createInstance(instanceBody(offer, spec, this.deployment, p.data, this.image));
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    return this.mine(await this.api.instances(), at, vmName);
  }

  /** No server-side name filter: match hostname/description client-side. */
  private mine(all: VerdaInstance[], at: Location, vmName: string): Observed[] {
    return all.filter((i) => hasIdentity(i, vmName, this.deployment) && (!i.location || i.location === at.region)).flatMap((i) => toObserved(i, at) ?? []);
  }

  /** This deployment's instances here, and the spot ones the market reclaimed (`preemption`). */
  async inventory(at: Location): Promise<Owned[]> {
    const seenAt = new Date().toISOString();
    return (await this.api.instances()).flatMap((i) => {
      const vmName = vmNameOf(i, this.deployment);
      const o = vmName !== undefined && (!i.location || i.location === at.region) ? (reclaimedSpot(i, at, seenAt) ?? toObserved(i, at)) : undefined;
      return o && vmName !== undefined ? [{ ...o, vmName }] : [];
    });
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const all = await this.api.instances();
    const found = this.mine(all, at, vmName);
    const live = found.filter((o) => o.status !== 'Terminating').map((o) => o.id);
    // The OS volume goes with the instance; an id no longer listed is gone (or goes with none).
    const osVolume = new Map(all.map((i) => [i.id, i.os_volume_id]));
    const foreign = new Set(all.filter((i) => isForeign(i, this.deployment)).map((i) => i.id));
    await deleteEach(
      [...ids.filter((id) => !foreign.has(id)), ...live],
      (id) =>
        this.api.deleteInstance(
          id,
          [osVolume.get(id)].filter((v): v is string => !!v),
        ),
      (e) => {
        const http = httpErrorOf(e);
        return http !== undefined && (http.status === 404 || (http.status === 400 && ALREADY_GONE.test(vendorError(http.body).message)));
      },
    );
  }

  /** This deployment's per-VM startup scripts (account-wide: the same list for every location), by name. */
  async sideInventory(_at: Location): Promise<SideResource[]> {
    return (await this.api.scripts()).flatMap((s) => {
      const vmName = vmNameOfOwnedName(s.name.replace(/\.[0-9a-f]{8}$/, ''), this.deployment);
      return vmName !== undefined && isScriptOf(s.name, vmName, this.deployment) ? [{ vmName, kind: 'startup-script', id: s.id }] : [];
    });
  }

  /** Removes this VM's startup scripts; shared (hash-named) SSH keys stay. */
  override async cleanup(_at: Location, vmName: string): Promise<void> {
    try {
      const mine = (await this.api.scripts()).filter((s) => isScriptOf(s.name, vmName, this.deployment)).map((s) => s.id);
      if (mine.length > 0) await this.api.deleteScripts(mine);
    } catch (e) {
      if (httpErrorOf(e)?.status !== 404) throw e;
    }
  }
}

/** The Verda provider when VERDA_CLIENT_ID and VERDA_CLIENT_SECRET are set, else undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): VerdaProvider | undefined {
  const clientId = env.VERDA_CLIENT_ID || env.DATACRUNCH_CLIENT_ID;
  const clientSecret = env.VERDA_CLIENT_SECRET || env.DATACRUNCH_CLIENT_SECRET;
  if (!clientId || !clientSecret) return undefined;
  return new VerdaProvider({
    ...opts,
    clientId,
    clientSecret,
    ...(env.VERDA_API_URL ? { baseUrl: env.VERDA_API_URL } : {}),
    ...(env.VERDA_IMAGE ? { image: env.VERDA_IMAGE } : {}),
  });
}
