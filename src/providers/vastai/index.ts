/**
 * Vast.ai adapter. Offers are marketplace asks (one machine each); identity is the instance
 * `label` `gpuprov-<vm>-<deployment hash>`, filtered server-side. A create may fail and still make an instance
 * (dstack saw it on spot asks): observe/delete by label find it, so teardown cleans it up.
 *
 * Spot is Vast.ai's interruptible market (docs.vast.ai api-reference/creating-instances-with-api,
 * "Interruptible (Bid) Instances"; api-reference/openapi.yaml `searchOffers`, `createInstance`):
 * - plan: only with `request.spot`, a second search with `type: 'bid'` (the API prices it at each
 *   machine's minimum bid, `min_bid`), listed as spot offers beside the on-demand search's, whose
 *   `dph_total` for the same ask is the on-demand price beside (absent when that ask is not in it);
 * - bid policy: we bid the ask's listed `min_bid` exactly, no margin; the offer's price is that bid
 *   plus storage (`dph_total`), so the matcher's cap (`maxPricePerHour`) bounds what we bid;
 * - create: the same `PUT /asks/{id}/` with `price` (per-machine bid, $/h); `cancel_unavail: true`
 *   (the API defaults it to false for interruptibles) so a bid that cannot start now answers 410
 *   `no_such_ask` instead of leaving a paused instance; that and `invalid_price` are Capacity for the
 *   spot offer (errors.ts);
 * - outbid: the instance is stopped (guides/reference/faq/rental-types) and listed with `is_bid`:
 *   `Observed.preemption` (map.ts `preemptionOf`), noticed when first seen, no deadline.
 */
import { ProviderError } from '../../core/errors';
import { renderShellScript } from '../cloud-init';
import { type InstanceSpec, type Json, type Location, type Observed, type Offer, type Owned, type ResourceRequest } from '../../core/provider';
import { deletableByName, ownedByName, ownedName, type DeploymentOption } from '../deployment';
import { CloudAdapter, VM_BOOT, fromKeyEnv, required } from '../cloud-adapter';
import { keyMaterial, keyName } from '../ssh-keys';
import { DEFAULT_VAST_URL, VastApi, type VastInstance } from './api';
import { isGone } from './errors';
import { CLOUD, dockerEnv, onstartScript, regionOf, searchQuery, toObserved, bestOffers } from './map';
import { deleteEach } from '../delete-each';

export interface VastOptions extends DeploymentOption {
  /** `VAST_API_KEY` in {@link fromEnv}. */
  apiKey?: string;
  /** `VAST_API_URL` in {@link fromEnv}. */
  baseUrl?: string;
  /** Container image (Vast injects sshd for the ssh run types). */
  image?: string;
  diskGb?: number;
}

/** Vast.ai container instances, on-demand or interruptible (spot), reached directly (public IP + mapped port) or via the proxy. */
export class VastProvider extends CloudAdapter {
  private readonly api: VastApi;
  private readonly image: string;
  private readonly diskGb: number;

  constructor(opts: VastOptions = {}) {
    // bootScript: `onstart` runs a shell script at container start.
    super(CLOUD, opts, { bootScript: true, openPorts: false, sshUser: { kind: 'provider' }, ...VM_BOOT, typicalBootMs: 3 * 60_000 });
    this.api = new VastApi({ apiKey: required(opts.apiKey, 'Vast.ai: no API key; set VAST_API_KEY'), baseUrl: opts.baseUrl ?? DEFAULT_VAST_URL });
    this.image = opts.image ?? 'nvidia/cuda:12.4.1-runtime-ubuntu22.04';
    this.diskGb = opts.diskGb ?? 50;
  }

  async plan(req: ResourceRequest): Promise<Offer[]> {
    if (!req.gpu) throw new ProviderError('InvalidRequest', 'Vast.ai: only GPU instances are planned; ask for a GPU');
    // A marketplace: a model nobody offers right now plans to no offers, not to an error.
    const disk = req.diskGb ?? this.diskGb;
    const now = new Date().toISOString();
    if (!req.spot) return bestOffers(await this.api.searchOffers(searchQuery(req, disk)), req, now);
    const [onDemand, bids] = await Promise.all([this.api.searchOffers(searchQuery(req, disk)), this.api.searchOffers(searchQuery(req, disk, 'bid'))]);
    const beside = new Map(onDemand.map((b) => [b.id, b.dph_total]));
    return [...bestOffers(bids, req, now, { onDemand: beside }), ...bestOffers(onDemand, req, now)];
  }

  /** Registers the worker's key on the account once (Vast adds account keys to new instances). */
  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    const pub = spec.publicKeys[0];
    if (!pub) throw new ProviderError('InvalidRequest', 'Vast.ai needs at least one SSH public key');
    const find = async (): Promise<string | undefined> => {
      const k = (await this.api.sshKeys()).find((x) => keyMaterial(x.key ?? x.public_key ?? '') === keyMaterial(pub));
      return k ? String(k.id) : undefined;
    };
    const existing = await find();
    if (existing) return { accountKey: keyName(pub), sshKeyId: existing };
    try {
      return { accountKey: keyName(pub), sshKeyId: String((await this.api.addSshKey(pub)).id) };
    } catch (err) {
      // Someone added the same key meanwhile: that is success.
      const again = await find().catch(() => undefined);
      if (again) return { accountKey: keyName(pub), sshKeyId: again };
      throw err;
    }
  }

  async create(offer: Offer, _prepared: Json, spec: InstanceSpec): Promise<string> {
    const x = offer.extra as { askId?: unknown; direct?: unknown; bid?: unknown } | undefined;
    if (typeof x?.askId !== 'number') throw new ProviderError('InvalidRequest', 'Vast.ai create: offer lacks its ask id');
    const bid = offer.market === 'spot' ? x.bid : undefined;
    if (offer.market === 'spot' && typeof bid !== 'number') throw new ProviderError('InvalidRequest', 'Vast.ai create: spot offer lacks its bid');
    const boot = spec.bootScript;
    const onstart = renderShellScript({ script: onstartScript(spec.publicKeys.slice(1), boot?.script), env: boot?.env ?? {} });
    const id = await this.api.create(x.askId, {
      client_id: 'me',
      image: spec.image ?? this.image,
      label: ownedName(spec.vmName, this.deployment),
      disk: spec.diskGb ?? this.diskGb,
      runtype: x.direct === true ? 'ssh_direc ssh_proxy' : 'ssh_proxy',
      env: dockerEnv(spec.openPorts, spec.vmName, this.deployment),
      onstart,
      cancel_unavail: true,
      ...(typeof bid === 'number' ? { price: bid } : {}),
    });
    return String(id);
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const list = await this.mine(at, vmName);
    const seenAt = new Date().toISOString();
    return list.map((i) => toObserved(i, at, seenAt)).filter((o): o is Observed => o !== undefined);
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const mine = await this.mine(at, vmName);
    const found = mine.map((i) => String(i.id));
    // Listed by label, so an id of another deployment's instance is not listed: check it by the full list.
    const unlisted = ids.filter((id) => !found.includes(id));
    const listed = unlisted.length ? (await this.api.instancesByLabel()).map((i) => ({ id: String(i.id), name: i.label })) : [];
    await deleteEach([...deletableByName(unlisted, listed, vmName, this.deployment), ...found], (id) => this.api.destroy(id), isGone);
  }

  /** One list of every instance of the account (paged), kept when its label is this deployment's. */
  async inventory(at: Location): Promise<Owned[]> {
    const seenAt = new Date().toISOString();
    return ownedByName(
      await this.api.instancesByLabel(),
      this.deployment,
      (i) => i.label,
      (i) => (!i.geolocation || regionOf(i.geolocation) === at.region ? toObserved(i, at, seenAt) : undefined),
    );
  }

  /** Instances with the label, re-checked client-side, in this region (country). */
  private async mine(at: Location, vmName: string): Promise<VastInstance[]> {
    const label = ownedName(vmName, this.deployment);
    return (await this.api.instancesByLabel(label)).filter((i) => i.label === label && (!i.geolocation || regionOf(i.geolocation) === at.region));
  }
}

/** The Vast.ai provider from `VAST_API_KEY` (and optional `VAST_API_URL`), or undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): VastProvider | undefined {
  return fromKeyEnv(env, opts, 'VAST_API_KEY', 'VAST_API_URL', (o) => new VastProvider(o));
}
