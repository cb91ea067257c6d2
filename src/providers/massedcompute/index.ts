import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { renderShellScript } from '../cloud-init';
import { type InstanceSpec, type Json, type Location, type Observed, type Offer, type Owned, type ResourceRequest } from '../../core/provider';
import { deletableByName, ownedByName, ownedName, type DeploymentOption } from '../deployment';
import { CloudAdapter, VM_BOOT, required } from '../cloud-adapter';
import { sameKey } from '../ssh-keys';
import { DEFAULT_BASE_URL, MassedApi } from './api';
import { ANY_REGION, CLOUD, hasIdentity, keyName, toObserved, toOffers } from './map';
import { deleteEach } from '../delete-each';

export interface MassedComputeOptions extends DeploymentOption {
  /** MASSED_COMPUTE_API_KEY. */
  token?: string;
  /** Defaults to MASSED_COMPUTE_API_URL, then https://vm.massedcompute.com/api/v1. */
  baseUrl?: string;
  /** Image id (MASSED_COMPUTE_IMAGE_ID); else the first Ubuntu image listed. */
  imageId?: number;
}

/** What `prepare` returns and `create` reads back: the image and the key names to launch with. */
const Prepared = z.object({ imageId: z.number(), sshKeys: z.array(z.string()) });

/**
 * Massed Compute VMs. No tags: the instance name `gpuprov-<vm>-<deployment hash>` is the identity. No cloud-init:
 * the boot script runs as the launch `command`. Placement is `regionName: "any"`.
 *
 * Listing: `GET /instance` is documented as running instances only, yet its items carry `status`
 * (booting…) and `os_booted`, so it lists every rented instance while it boots. gpuprov therefore
 * treats an instance missing from the list as gone and keeps no memory of recent launches (that
 * would not survive a worker restart); a freshly launched instance shows up as Pending.
 */
export class MassedComputeProvider extends CloudAdapter {
  private readonly api: MassedApi;
  private readonly imageId: number | undefined;

  constructor(opts: MassedComputeOptions = {}) {
    // openPorts: there is no firewall endpoint: instances are reachable on every port.
    super(CLOUD, opts, { bootScript: true, openPorts: true, sshUser: { kind: 'provider' }, ...VM_BOOT, typicalBootMs: 5 * 60_000 });
    this.api = new MassedApi(required(opts.token, 'massedcompute: no API key; set MASSED_COMPUTE_API_KEY'), opts.baseUrl ?? DEFAULT_BASE_URL);
    this.imageId = opts.imageId;
  }

  async plan(_req: ResourceRequest): Promise<Offer[]> {
    const inventory = await this.api.inventory();
    return toOffers(inventory, new Date().toISOString());
  }

  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    if (spec.publicKeys.length === 0) throw new ProviderError('InvalidRequest', 'massedcompute: at least one SSH public key is required');
    // `--image` is a numeric image id (GET /images), like MASSED_COMPUTE_IMAGE_ID.
    let imageId = spec.image !== undefined && /^\d+$/.test(spec.image) ? Number(spec.image) : this.imageId;
    if (imageId === undefined) {
      const ubuntu = (await this.api.images()).find((i) => /ubuntu/i.test(i.vm_image_name));
      if (!ubuntu) throw new ProviderError('InvalidRequest', 'massedcompute: no Ubuntu image listed; set MASSED_COMPUTE_IMAGE_ID');
      imageId = ubuntu.vm_image_id;
    }
    const keys = await this.api.sshKeys();
    const sshKeys: string[] = [];
    for (const pub of spec.publicKeys) {
      const name = keyName(pub);
      const found = keys.find((k) => k.name === name || (k.public_key !== undefined && sameKey(k.public_key, pub)));
      if (!found) await this.api.addSshKey(name, pub);
      sshKeys.push(found ? found.name : name);
    }
    return { imageId, sshKeys } satisfies z.infer<typeof Prepared>;
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'massedcompute: prepared data is not from this adapter (create called without prepare?)');
    return this.api.launch({
      imageId: p.data.imageId,
      productName: offer.instanceType,
      regionName: ANY_REGION,
      instanceName: ownedName(spec.vmName, this.deployment),
      sshKeys: p.data.sshKeys,
      ...(spec.bootScript ? { command: renderShellScript(spec.bootScript) } : {}),
    });
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    // No server-side filter: match the name client-side.
    return (await this.api.instances()).filter((i) => hasIdentity(i, vmName, this.deployment)).flatMap((i) => toObserved(i, at) ?? []);
  }

  async inventory(at: Location): Promise<Owned[]> {
    return ownedByName(
      await this.api.instances(),
      this.deployment,
      (i) => i.name,
      (i) => toObserved(i, at),
    );
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const all = await this.api.instances();
    const found = all.filter((i) => hasIdentity(i, vmName, this.deployment)).flatMap((i) => toObserved(i, at) ?? []);
    const named = all.map((i) => ({ id: i.uuid, name: i.name }));
    await deleteEach([...deletableByName(ids, named, vmName, this.deployment), ...found.filter((o) => o.status !== 'Terminating').map((o) => o.id)], (id) =>
      this.api.terminate(id),
    );
  }
}

/** The Massed Compute provider when MASSED_COMPUTE_API_KEY is set, else undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): MassedComputeProvider | undefined {
  const token = env.MASSED_COMPUTE_API_KEY;
  if (!token) return undefined;
  const imageId = Number(env.MASSED_COMPUTE_IMAGE_ID);
  return new MassedComputeProvider({
    ...opts,
    token,
    ...(env.MASSED_COMPUTE_API_URL ? { baseUrl: env.MASSED_COMPUTE_API_URL } : {}),
    ...(env.MASSED_COMPUTE_IMAGE_ID && Number.isInteger(imageId) ? { imageId } : {}),
  });
}
