/**
 * Lambda Cloud adapter (REST v1). Identity: tag `gpuprov-vm-name` plus the name `gpuprov-<vm>`;
 * the API cannot filter, so every observe lists the account and matches client-side.
 */
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { renderCloudInit } from '../cloud-init';
import { keyMaterial, keyName } from '../ssh-keys';
import { identityName, type InstanceSpec, type Json, type Location, type Observed, type Offer, type Owned, type ResourceRequest } from '../../core/provider';
import type { DeploymentOption } from '../deployment';
import { CloudAdapter, VM_BOOT, fromKeyEnv, required } from '../cloud-adapter';
import { DEFAULT_LAMBDA_URL, LambdaApi } from './api';
import { isDuplicate, isNotFound } from './errors';
import { CLOUD, SSH_USER, hasIdentity, identityTags, isForeign, toObserved, toOffers, vmNameOf } from './map';

export interface LambdaOptions extends DeploymentOption {
  /** API key; `LAMBDA_API_KEY` in {@link fromEnv}. */
  apiKey?: string;
  /** Base URL including `/api/v1`; `LAMBDA_API_URL` in {@link fromEnv}. */
  baseUrl?: string;
}

/** What `prepare` returns and `create` reads back: the registered key's name. */
const Prepared = z.object({ sshKeyName: z.string().min(1) });

/** Lambda Cloud: cloud-init VMs, user `ubuntu`, exactly one registered SSH key per launch. */
/** Lambda image ids are UUIDs; anything else `--image` names is a family. */
const IMAGE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[0-9a-f]{32}$/i;

export class LambdaProvider extends CloudAdapter {
  private readonly api: LambdaApi;

  constructor(opts: LambdaOptions = {}) {
    super(CLOUD, opts, { bootScript: true, openPorts: false, sshUser: { kind: 'fixed', user: SSH_USER }, ...VM_BOOT, typicalBootMs: 4 * 60_000 });
    this.api = new LambdaApi({ apiKey: required(opts.apiKey, 'Lambda Cloud: no API key; set LAMBDA_API_KEY'), baseUrl: opts.baseUrl ?? DEFAULT_LAMBDA_URL });
  }

  async plan(_req: ResourceRequest): Promise<Offer[]> {
    return toOffers(await this.api.instanceTypes(), new Date().toISOString());
  }

  /** Registers the worker's key (first of `publicKeys`) once; the launch takes exactly one key name. */
  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    const pub = spec.publicKeys[0];
    if (!pub) throw new ProviderError('InvalidRequest', 'Lambda needs at least one SSH public key');
    const find = async (): Promise<string | undefined> => (await this.api.sshKeys()).find((k) => keyMaterial(k.public_key) === keyMaterial(pub))?.name;
    const existing = await find();
    if (existing) return { sshKeyName: existing };
    const name = keyName(pub);
    try {
      await this.api.addSshKey(name, pub);
    } catch (err) {
      // A name clash: the name is a hash of the key, so the same key is already registered.
      if (!isDuplicate(err)) throw err;
    }
    return { sshKeyName: name };
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'Lambda create: prepared data is not from this adapter (no sshKeyName)');
    const sshKeyName = p.data.sshKeyName;
    const ids = await this.api.launch({
      region_name: offer.region,
      instance_type_name: offer.instanceType,
      ssh_key_names: [sshKeyName],
      name: identityName(spec.vmName).slice(0, 64),
      // The other keys (users') reach the VM through cloud-init, not the account.
      user_data: renderCloudInit(spec.bootScript, spec.publicKeys.slice(1)),
      tags: identityTags(spec.vmName, this.deployment),
      // `--image`: an image id (a UUID, GET /images) or a family name (`lambda-stack-24-04`).
      ...(spec.image ? { image: IMAGE_ID.test(spec.image) ? { id: spec.image } : { family: spec.image } } : {}),
    });
    const id = ids[0];
    if (!id) throw new ProviderError('Failed', 'Lambda launch returned no instance id');
    return id;
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const all = await this.api.instances();
    return all
      .filter((i) => hasIdentity(i, vmName, this.deployment) && (i.region?.name ?? at.region) === at.region)
      .map((i) => toObserved(i, at))
      .filter((o): o is Observed => o !== undefined);
  }

  async inventory(at: Location): Promise<Owned[]> {
    const owned: Owned[] = [];
    for (const i of await this.api.instances()) {
      const vmName = vmNameOf(i, this.deployment);
      const o = vmName !== undefined && (i.region?.name ?? at.region) === at.region ? toObserved(i, at) : undefined;
      if (o && vmName !== undefined) owned.push({ ...o, vmName });
    }
    return owned;
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const all = await this.api.instances();
    // Terminate only what the listing shows alive: an unknown id would fail the whole call.
    const targets = all
      .filter(
        (i) =>
          (ids.includes(i.id) && !isForeign(i, this.deployment)) || (hasIdentity(i, vmName, this.deployment) && (i.region?.name ?? at.region) === at.region),
      )
      .filter((i) => i.status !== 'terminated' && i.status !== 'terminating' && i.status !== 'preempted')
      .map((i) => i.id);
    if (targets.length === 0) return;
    try {
      await this.api.terminate(targets);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** The Lambda provider from `LAMBDA_API_KEY` (and optional `LAMBDA_API_URL`), or undefined without a key. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): LambdaProvider | undefined {
  return fromKeyEnv(env, opts, 'LAMBDA_API_KEY', 'LAMBDA_API_URL', (o) => new LambdaProvider(o));
}
