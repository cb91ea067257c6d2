/**
 * Prime Intellect adapter. Offers come from availability (one per data centre); the worker's SSH
 * key is registered through the API; the login user, host and port come from `sshConnection`.
 * Identity is the pod name `gpuprov-<vm>-<deployment hash>` (no tags; the list is filtered client-side).
 *
 * Spot (checked December 2026 against the API's OpenAPI document as catalogued in
 * github.com/api-evangelist/prime-intellect `openapi/prime-intellect-pods-api-openapi.yml` and
 * `…-availability-api-openapi.yml`, and the official CLI prime==0.18.0):
 * - an availability item with `isSpot: true` is a spot ask with its own `cloudId` and its price in
 *   `prices` like any other; `plan` lists those (`market: 'spot'`) only with `request.spot`, from
 *   the same one availability call, the cheapest on-demand box of the same place and shape beside;
 * - create has no market field (`PodRequestConfig`, `additionalProperties: false`): the spot ask's
 *   `cloudId` makes a spot pod, as `prime pods create` does when one picks a "(spot)" provider
 *   (prime_cli/commands/pods.py); `maxPrice` is the offer's price as for on-demand; a refusal is
 *   classified as today (Capacity for that offer, whose key carries /spot);
 * - pods carry `isSpot`; the API exposes no reclaim notice or state (`PodStatusEnum`: PROVISIONING,
 *   PENDING, ACTIVE, STOPPED, ERROR, DELETING, UNKNOWN, TERMINATED), so a spot pod found STOPPED
 *   (gpuprov never stops pods) is reported as a preemption, first seen, no deadline (map.ts).
 */
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { type InstanceSpec, type Json, type Location, type Observed, type Offer, type Owned, type ResourceRequest } from '../../core/provider';
import { deletableByName, ownedAtDataCentre, ownedName, type DeploymentOption } from '../deployment';
import { CloudAdapter, VM_BOOT, fromKeyEnv, required } from '../cloud-adapter';
import { keyMaterial, keyName } from '../ssh-keys';
import { DEFAULT_PRIME_URL, PrimeApi, type PrimePod } from './api';
import { isConflict } from './errors';
import { CLOUD, hasIdentity, toObserved, toOffers } from './map';
import { deleteEach } from '../delete-each';

export interface PrimeIntellectOptions extends DeploymentOption {
  /** `PRIME_API_KEY` in {@link fromEnv}. */
  apiKey?: string;
  /** Base URL including `/api/v1`; `PRIME_API_URL` in {@link fromEnv}. */
  baseUrl?: string;
  /** Image when the offer lists none. */
  image?: string;
}

interface OfferExtra {
  cloudId: string;
  gpuType: string;
  gpuCount: number;
  socket: string | null;
  provider: string | null;
  dataCenter: string | null;
  country: string | null;
  security: string | null;
  image: string | null;
  diskSize: number | null;
  vcpus: number | null;
  memory: number | null;
}

/** What `prepare` returns and `create` reads back: the registered key's id. */
const Prepared = z.object({ sshKeyId: z.string().min(1) });

/** Prime Intellect GPU pods (VMs or containers depending on the upstream provider). */
export class PrimeIntellectProvider extends CloudAdapter {
  private readonly api: PrimeApi;
  private readonly image: string;

  constructor(opts: PrimeIntellectOptions = {}) {
    super(CLOUD, opts, { bootScript: false, openPorts: false, sshUser: { kind: 'provider' }, ...VM_BOOT, typicalBootMs: 3 * 60_000 });
    this.api = new PrimeApi({ apiKey: required(opts.apiKey, 'Prime Intellect: no API key; set PRIME_API_KEY'), baseUrl: opts.baseUrl ?? DEFAULT_PRIME_URL });
    this.image = opts.image ?? 'ubuntu_22_cuda_12';
  }

  /** The boxes with `req.gpu.count` GPUs (the vendor query); `planOffers` keeps the ones that match. */
  async plan(req: ResourceRequest): Promise<Offer[]> {
    if (!req.gpu) throw new ProviderError('InvalidRequest', 'Prime Intellect: only GPU pods are planned; ask for a GPU');
    const count = req.gpu.count;
    return toOffers(await this.api.availability(count), new Date().toISOString(), req.spot !== undefined);
  }

  /** Registers the worker's key (first of `publicKeys`) once, named by its hash; `sshKeyId` goes into create. */
  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    const pub = spec.publicKeys[0];
    if (!pub) throw new ProviderError('InvalidRequest', 'Prime Intellect needs at least one SSH public key');
    const find = async (): Promise<string | undefined> =>
      (await this.api.sshKeys()).find((k) => k.publicKey && keyMaterial(k.publicKey) === keyMaterial(pub))?.id;
    const existing = await find();
    if (existing) return { sshKeyId: existing };
    try {
      return { sshKeyId: (await this.api.addSshKey(keyName(pub), pub)).id };
    } catch (err) {
      // Clash: the name is a hash of the key, so someone registered this very key meanwhile.
      const again = isConflict(err) ? await find() : undefined;
      if (again) return { sshKeyId: again };
      throw err;
    }
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    const x = offer.extra as unknown as OfferExtra | undefined;
    if (!p.success || !x?.cloudId) throw new ProviderError('InvalidRequest', 'Prime Intellect create: offer or prepare data incomplete');
    const sshKeyId = p.data.sshKeyId;
    const pod: Record<string, unknown> = {
      name: ownedName(spec.vmName, this.deployment),
      cloudId: x.cloudId,
      gpuType: x.gpuType,
      gpuCount: x.gpuCount,
      image: spec.image ?? x.image ?? this.image,
      sshKeyId,
      envVars: [
        { key: 'GPUPROV_VM_NAME', value: spec.vmName },
        { key: 'GPUPROV_OWNER', value: this.deployment },
      ],
      ...(x.socket ? { socket: x.socket } : {}),
      ...(x.dataCenter ? { dataCenterId: x.dataCenter } : {}),
      ...(x.country ? { country: x.country } : {}),
      ...(x.security ? { security: x.security } : {}),
      ...(spec.diskGb !== undefined ? { diskSize: spec.diskGb } : x.diskSize ? { diskSize: x.diskSize } : {}),
      ...(x.vcpus ? { vcpus: x.vcpus } : {}),
      ...(x.memory ? { memory: x.memory } : {}),
      ...(offer.pricePerHour !== undefined ? { maxPrice: offer.pricePerHour } : {}),
    };
    const created = await this.api.createPod({ pod, provider: { type: x.provider ?? 'unknown' } });
    return created.id;
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const mine = (await this.api.pods()).filter((p) => hasIdentity(p, vmName, this.deployment, at));
    // The list may lag on connection details: ask the status endpoint for active pods without them.
    const lacking = mine.filter((p) => p.status.toUpperCase() === 'ACTIVE' && !p.sshConnection?.toString().trim()).map((p) => p.id);
    const fresh = lacking.length ? await this.api.podStatus(lacking) : [];
    const seenAt = new Date().toISOString();
    return mine
      .map((p): PrimePod => {
        const s = fresh.find((f) => f.podId === p.id);
        return s
          ? { ...p, status: s.status, sshConnection: s.sshConnection ?? p.sshConnection, installationStatus: s.installationStatus ?? p.installationStatus }
          : p;
      })
      .map((p) => toObserved(p, at, seenAt))
      .filter((o): o is Observed => o !== undefined);
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const pods = await this.api.pods();
    const mine = pods.filter((p) => hasIdentity(p, vmName, this.deployment, at) && !['TERMINATED', 'DELETING'].includes(p.status.toUpperCase()));
    await deleteEach([...deletableByName(ids, pods, vmName, this.deployment), ...mine.map((p) => p.id)], (id) => this.api.deletePod(id));
  }

  async inventory(at: Location): Promise<Owned[]> {
    const seenAt = new Date().toISOString();
    return ownedAtDataCentre(await this.api.pods(), this.deployment, at, (p, a) => toObserved(p, a, seenAt));
  }
}

/** The Prime Intellect provider from `PRIME_API_KEY` (and optional `PRIME_API_URL`), or undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): PrimeIntellectProvider | undefined {
  return fromKeyEnv(env, opts, 'PRIME_API_KEY', 'PRIME_API_URL', (o) => new PrimeIntellectProvider(o));
}
