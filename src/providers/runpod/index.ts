/**
 * RunPod adapter (REST v2). Pods are containers: no cloud-init, no k3s. Identity is the pod
 * name `gpuprov-<vm>-<deployment hash>` (v2 pods carry no tags we can filter on); the owner also travels in the env.
 *
 * On-demand only: RunPod's API no longer sells spot (checked December 2026), so `plan` lists no
 * spot offers whatever `request.spot` says and the row in src/core/clouds.ts stays on-demand:
 * - REST v2, the API this adapter speaks (runpod/docs `api-reference-v2/openapi.json`, 2.0.0):
 *   `CreatePodRequest` has no interruptible or bid field and admits no other
 *   (`unevaluatedProperties: false`); `GpuType.price` quotes `secure` and `community` only;
 *   `PodStatus` has no reclaimed state.
 * - REST v1's `PodCreateInput.interruptible` (`api-reference/openapi.json`) went with v1, retired
 *   on 2026-11-15 (`api-reference-v2/migrate-from-v1.mdx`).
 * - GraphQL `podRentInterruptable` (`bidPerGpu`, priced by `lowestPrice.minimumBidPrice`): RunPod
 *   wrote on 2026-04-13 that it "is being removed from the runpod api"
 *   (https://github.com/runpod/runpodctl/pull/267); its docs dropped every spot page on 2026-05-06
 *   (runpod/docs 8e5aebdb) and `pods/pricing.mdx` sells on-demand and savings plans only; the
 *   official SDK (runpod==1.11.0) creates pods with `podFindAndDeployOnDemand` only.
 */
import { ProviderError } from '../../core/errors';
import { type InstanceSpec, type Json, type Location, type Observed, type Offer, type Owned, type ResourceRequest } from '../../core/provider';
import { deletableByName, ownedAtDataCentre, ownedName, type DeploymentOption } from '../deployment';
import { CloudAdapter, fromKeyEnv, required } from '../cloud-adapter';
import { keyName } from '../ssh-keys';
import { DEFAULT_RUNPOD_URL, RunPodApi } from './api';
import { CLOUD, hasIdentity, mergeKeys, statusOf, toObserved, toOffers } from './map';
import { deleteEach } from '../delete-each';

export interface RunPodOptions extends DeploymentOption {
  /** `RUNPOD_API_KEY` in {@link fromEnv}. */
  apiKey?: string;
  /** Base URL including `/v2`; `RUNPOD_API_URL` in {@link fromEnv}. */
  baseUrl?: string;
  /** Container image that runs sshd (RunPod's images do when `PUBLIC_KEY` is set). */
  image?: string;
  /** Container disk, GB. */
  diskGb?: number;
}

const DEFAULT_IMAGE = 'runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04';

/** RunPod Secure Cloud GPU pods, reached over `ssh.direct` (public IP + NAT port, user root). */
export class RunPodProvider extends CloudAdapter {
  private readonly api: RunPodApi;
  private readonly image: string;
  private readonly diskGb: number;

  constructor(opts: RunPodOptions = {}) {
    // openPorts: ports are published per pod but behind a provider-chosen NAT port, so 6443 is not 6443.
    super(CLOUD, opts, {
      bootScript: false,
      openPorts: false,
      sshUser: { kind: 'provider' },
      bootTimeoutMs: 15 * 60_000,
      pollIntervalMs: 5_000,
      typicalBootMs: 90_000,
    });
    this.api = new RunPodApi({ apiKey: required(opts.apiKey, 'RunPod: no API key; set RUNPOD_API_KEY'), baseUrl: opts.baseUrl ?? DEFAULT_RUNPOD_URL });
    this.image = opts.image ?? DEFAULT_IMAGE;
    this.diskGb = opts.diskGb ?? 50;
  }

  /** Every GPU type in stock, priced for `req.gpu.count` GPUs (the vendor query); `planOffers` keeps the ones that match. */
  async plan(req: ResourceRequest): Promise<Offer[]> {
    if (!req.gpu) throw new ProviderError('InvalidRequest', 'RunPod: only GPU pods are planned; ask for a GPU');
    const count = req.gpu.count;
    return toOffers(await this.api.gpus(count), count, new Date().toISOString());
  }

  /**
   * Adds the worker's key to the account key set (read, merge, write: PUT replaces the whole set,
   * so keys already there are kept). `startSsh` injects the account keys into new pods.
   */
  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    const worker = spec.publicKeys[0];
    if (!worker) throw new ProviderError('InvalidRequest', 'RunPod needs at least one SSH public key');
    const merged = mergeKeys(await this.api.accountKeys(), worker);
    if (merged.changed) await this.api.putAccountKeys(merged.keys);
    return { accountKey: keyName(worker) };
  }

  async create(offer: Offer, _prepared: Json, spec: InstanceSpec): Promise<string> {
    const ports = [...new Set([22, ...spec.openPorts])].map((p) => `${p}/tcp`);
    const pod = await this.api.createPod({
      name: ownedName(spec.vmName, this.deployment),
      image: spec.image ?? this.image,
      gpu: { id: offer.instanceType, count: offer.gpu?.count ?? 1 },
      cloud: 'SECURE',
      dataCenterIds: [offer.region],
      ports,
      startSsh: true,
      // RunPod images append PUBLIC_KEY to authorized_keys: the users' keys ride here, not on the account.
      env: { PUBLIC_KEY: spec.publicKeys.join('\n'), GPUPROV_VM_NAME: spec.vmName, GPUPROV_OWNER: this.deployment },
      disk: spec.diskGb ?? this.diskGb,
    });
    return pod.id;
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const pods = await this.api.pods();
    return pods
      .filter((p) => hasIdentity(p, vmName, this.deployment, at))
      .map((p) => toObserved(p, at))
      .filter((o): o is Observed => o !== undefined);
  }

  async inventory(at: Location): Promise<Owned[]> {
    return ownedAtDataCentre(await this.api.pods(), this.deployment, at, toObserved);
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const pods = await this.api.pods();
    const byIdentity = pods.filter((p) => hasIdentity(p, vmName, this.deployment, at) && statusOf(p) !== 'TERMINATED').map((p) => p.id);
    // No bulk delete: one DELETE per pod; 404 (already gone) is success (`deletePod`).
    await deleteEach([...deletableByName(ids, pods, vmName, this.deployment), ...byIdentity], (id) => this.api.deletePod(id));
  }
}

/** The RunPod provider from `RUNPOD_API_KEY` (and optional `RUNPOD_API_URL`), or undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): RunPodProvider | undefined {
  return fromKeyEnv(env, opts, 'RUNPOD_API_KEY', 'RUNPOD_API_URL', (o) => new RunPodProvider(o));
}
