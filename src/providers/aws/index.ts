import { createHash } from 'node:crypto';
import type { _InstanceType, Filter } from '@aws-sdk/client-ec2';
import { ProviderError } from '../../core/errors';
import { marketOf } from '../../core/offers';
import { renderCloudInit } from '../cloud-init';
import { IDENTITY_TAG, OWNER_TAG } from '../../core/provider';
import type {
  CloudProvider,
  InstanceSpec,
  Json,
  Location,
  Observed,
  Offer,
  Owned,
  Preemption,
  QuotaShortfall,
  QuotaUnknown,
  ResourceRequest,
  SideResource,
} from '../../core/provider';
import type { BlockOffering, BlockQuery, ReservationInfo } from '../../core/reservation';
import { createKeyOf } from '../create-key';
import { ownedName, type DeploymentOption } from '../deployment';
import { CloudAdapter } from '../cloud-adapter';
import { awsConfig, hasCredentials, type AwsProviderOptions } from './config';
import type { Ec2Api } from './api';
import { CATALOG } from './catalog';
import { IDEM_TAG, LIVE_STATES, observedOf, offerFor, tagOf, type Ec2Instance } from './map';
import { ownerTags, prepareLaunch, Prepared } from './prepare';
import type { AwsPricing } from './pricing';
import type { AwsQuotas } from './quotas';
import { SPOT_MARKET, preemptionOf, spotOffers, spotScoped, type SpotRequestStatus } from './spot';
import { blockOfferings, buyBlock } from './blocks';
import { reservedLaunch, reservedScoped } from './reserved';
import { reservedOffers } from './reserved-plan';

export type { AwsProviderOptions } from './config';

/** Anything else cannot name an EC2 instance (EC2 would answer InvalidInstanceID.Malformed). */
const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/**
 * AWS EC2. On-demand offers are regional (cloud × region × type, no zone); spot offers (only
 * with `request.spot`) are per AZ, the spot market's pool (./spot.ts). `create` is one attempt:
 * it tries the default subnet of each AZ that offers the type (of the offer's AZ only, for a zonal
 * offer), in AZ order, and moves to the next subnet only on Capacity/Unavailable; the first
 * instance launched ends it.
 * With `request.reserved`, the plan lists the account's capacity reservations and bought blocks
 * instead (./reserved-plan.ts), and a reserved offer's create is targeted at its reservation
 * (./reserved.ts); capacity blocks are listed and bought by ./blocks.ts.
 * SSH keys and the boot script reach the VM through cloud-init user-data (no key pair).
 * Identity: tags `gpuprov-vm-name` and `gpuprov-owner` (the deployment), both matched; the per-VM
 * security group is named `gpuprov-<vm>-<deployment hash>` (names are unique per VPC).
 */
export class AwsProvider extends CloudAdapter {
  private readonly api: Ec2Api;
  private readonly regions: string[];
  private readonly amiId: string | undefined;
  private readonly usePrivateIp: boolean;
  private readonly pricing: AwsPricing | undefined;
  private readonly quotas: AwsQuotas | undefined;

  constructor(opts: AwsProviderOptions = {}) {
    // bootTimeoutMs: P-family instances with the Deep Learning AMI can take several minutes to pass checks.
    super('aws', opts, {
      bootScript: true,
      openPorts: true,
      sshUser: { kind: 'fixed', user: 'ubuntu' },
      bootTimeoutMs: 20 * 60_000,
      pollIntervalMs: 5_000,
      typicalBootMs: 90_000,
    });
    ({
      api: this.api,
      regions: this.regions,
      amiId: this.amiId,
      usePrivateIp: this.usePrivateIp,
      pricing: this.pricing,
      quotas: this.quotas,
    } = awsConfig(opts));
  }

  /**
   * Every catalog type the regions offer (DescribeInstanceTypeOfferings), fewest GPUs first, then
   * cheapest; `planOffers` keeps the ones that match the request. Only `req.regions` and
   * `req.spot` are read. Prices come from the Price List when it answers (cached daily), else from
   * the dated catalog. With `req.spot`, also one spot offer per AZ priced now (./spot.ts), from one
   * DescribeSpotPriceHistory per region made beside the other calls; without it, no spot call.
   */
  async plan(req: ResourceRequest): Promise<Offer[]> {
    const ask = req.reserved;
    if (ask && ask.kind !== 'queue') {
      const regions = req.regions?.length ? req.regions : this.regions;
      return reservedOffers({ cloud: this.name, api: this.api, deployment: this.deployment, regions, pricing: this.pricing }, ask);
    }
    const entries = [...CATALOG].sort((a, b) => a.gpuCount - b.gpuCount || a.pricePerHour - b.pricePerHour);
    const regions = req.regions?.length ? req.regions : this.regions;
    const types = entries.map((e) => e.instanceType);
    const spotAt = req.spot ? new Date() : undefined;
    const [offered, live, spot] = await Promise.all([
      Promise.all(regions.map(async (r) => new Set((await this.api.typeOfferings(r, types, 'region')).map((o) => o.instanceType)))),
      this.pricing?.lookup(regions, types),
      spotAt ? Promise.all(regions.map((r) => this.api.spot.prices(r, types, spotAt))) : undefined,
    ]);
    const offers: Offer[] = [];
    for (const e of entries) {
      regions.forEach((r, i) => {
        if (offered[i]?.has(e.instanceType)) offers.push(offerFor(this.name, r, e, live?.(r, e.instanceType)));
      });
    }
    if (spot && spotAt) {
      const onDemand = [...offers];
      regions.forEach((r, i) => offers.push(...spotOffers(onDemand, spot[i] ?? [], r, spotAt.toISOString())));
    }
    // Live prices may reorder the catalog's rungs (stable: regions keep their order).
    offers.sort((a, b) => (a.gpu?.count ?? 0) - (b.gpu?.count ?? 0) || (a.pricePerHour ?? 0) - (b.pricePerHour ?? 0));
    if (offers.length === 0) throw new ProviderError('InvalidRequest', `AWS offers none of its catalog types in ${regions.join(', ')}`);
    return offers;
  }

  /**
   * vCPU quotas (src/providers/aws/quotas.ts): per region of the offers, one GetServiceQuota per
   * quota their families count against, and one DescribeInstances of the account's running ones.
   */
  async quotaShortfalls(offers: readonly Offer[]): Promise<(QuotaShortfall | QuotaUnknown)[]> {
    if (!this.quotas) return [];
    // A reservation's capacity already counts against the quotas (it is launched into, not added).
    const counted = offers.filter((o) => marketOf(o) !== 'reserved');
    if (counted.length === 0) return [];
    return this.quotas.shortfalls(counted, (region) => this.api.describeInstances(region, [{ Name: 'instance-state-name', Values: ['pending', 'running'] }]));
  }

  /** Default VPC subnets (AZs offering the type, in AZ order), the per-VM security group, the image. */
  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    return prepareLaunch({ api: this.api, deployment: this.deployment, amiId: this.amiId }, offer, spec);
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'AWS create: prepared data is not from AwsProvider.prepare');
    const region = offer.region;
    const idem = createKeyOf(spec.idempotencyKey);
    // ClientToken makes a retried RunInstances return the first instance on real EC2; moto
    // ignores ClientToken, and EC2 matches tokens per subnet attempt only, so the attempt's
    // idempotency tag is checked first as well (one DescribeInstances).
    const earlier = await this.api.describeInstances(region, [
      { Name: `tag:${IDEM_TAG}`, Values: [idem] },
      { Name: 'instance-state-name', Values: LIVE_STATES },
    ]);
    if (earlier[0]) return earlier[0].InstanceId;

    const tags = [...ownerTags(spec.vmName, this.deployment), { Key: IDEM_TAG, Value: idem }];
    const userData = Buffer.from(renderCloudInit(spec.bootScript, spec.publicKeys), 'utf8').toString('base64');
    const spot = marketOf(offer) === 'spot';
    const reserved = marketOf(offer) === 'reserved' ? reservedLaunch(offer) : undefined;
    let failure: ProviderError | undefined;
    for (const subnetId of p.data.subnetIds) {
      try {
        return await this.api.runInstance(region, {
          ImageId: p.data.imageId,
          InstanceType: offer.instanceType as _InstanceType,
          MinCount: 1,
          MaxCount: 1,
          // One token per (attempt, subnet): the same token with another subnet could be an
          // IdempotentParameterMismatch. 64 hex chars = EC2's maximum token length.
          ClientToken: sha256(`${spec.idempotencyKey}\n${subnetId}`),
          SubnetId: subnetId,
          SecurityGroupIds: [p.data.securityGroupId],
          UserData: userData,
          MetadataOptions: { HttpTokens: 'required' },
          ...(spot ? { InstanceMarketOptions: SPOT_MARKET } : {}),
          ...reserved,
          ...(p.data.rootVolume
            ? { BlockDeviceMappings: [{ DeviceName: p.data.rootVolume.device, Ebs: { VolumeSize: p.data.rootVolume.sizeGb, DeleteOnTermination: true } }] }
            : {}),
          TagSpecifications: [
            { ResourceType: 'instance', Tags: tags },
            { ResourceType: 'volume', Tags: tags },
          ],
        });
      } catch (caught) {
        // A spot or reserved answer blocks only its offer (its key ends in /spot or /reserved), never on-demand.
        const err = spot ? spotScoped(caught) : reserved ? reservedScoped(caught) : caught;
        if (!(err instanceof ProviderError) || (err.kind !== 'Capacity' && err.kind !== 'Unavailable')) throw err;
        // Another AZ may have it; report Capacity over Unavailable if every AZ fails.
        if (!failure || err.kind === 'Capacity') failure = err;
      }
    }
    throw failure ?? new ProviderError('Unavailable', `AWS ${region}: no subnet to launch ${offer.instanceType} in`);
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const filters: Filter[] = [
      { Name: `tag:${IDENTITY_TAG}`, Values: [vmName] },
      { Name: `tag:${OWNER_TAG}`, Values: [this.deployment] },
      { Name: 'instance-state-name', Values: LIVE_STATES },
    ];
    if (at.zone) filters.push({ Name: 'availability-zone', Values: [at.zone] });
    const found = await this.api.describeInstances(at.region, filters);
    const reclaims = await this.preemptions(at.region, found);
    return found.flatMap((i) => observedOf(this.name, at.region, i, this.usePrivateIp, reclaims.get(i.InstanceId)) ?? []);
  }

  async inventory(at: Location): Promise<Owned[]> {
    const filters: Filter[] = [
      { Name: `tag:${OWNER_TAG}`, Values: [this.deployment] },
      { Name: 'instance-state-name', Values: LIVE_STATES },
    ];
    if (at.zone) filters.push({ Name: 'availability-zone', Values: [at.zone] });
    const found = await this.api.describeInstances(at.region, filters);
    const reclaims = await this.preemptions(at.region, found);
    return found.flatMap((i) => {
      const vmName = tagOf(i, IDENTITY_TAG);
      const o = vmName === undefined ? undefined : observedOf(this.name, at.region, i, this.usePrivateIp, reclaims.get(i.InstanceId));
      return o && vmName !== undefined ? [{ ...o, vmName }] : [];
    });
  }

  /**
   * The market's reclaims among `found` (./spot.ts): one DescribeSpotInstanceRequests for all its
   * spot instances, none when there are none (on-demand looks make no extra call).
   */
  private async preemptions(region: string, found: readonly Ec2Instance[]): Promise<Map<string, Preemption>> {
    const out = new Map<string, Preemption>();
    const spot = found.filter((i) => i.InstanceLifecycle === 'spot');
    if (spot.length === 0) return out;
    const ids = [...new Set(spot.flatMap((i) => i.SpotInstanceRequestId ?? []))];
    let requests: SpotRequestStatus[] = [];
    try {
      if (ids.length > 0) requests = await this.api.spot.requests(region, ids);
    } catch (err) {
      // Without ec2:DescribeSpotInstanceRequests the instances are still observed (their
      // StateReason still tells a reclaim); other failures fail the look as before.
      if (!(err instanceof ProviderError) || err.kind !== 'Credentials') throw err;
    }
    const now = new Date().toISOString();
    for (const i of spot) {
      const p = preemptionOf(
        i,
        requests.find((r) => r.requestId === i.SpotInstanceRequestId),
        now,
      );
      if (p) out.set(i.InstanceId, p);
    }
    return out;
  }

  async delete(at: Location, vmName: string, ids: string[], exact = false): Promise<void> {
    const found = (await this.observe(at, vmName)).map((o) => o.id).filter((id) => !exact || ids.includes(id));
    let given = ids.filter((id) => INSTANCE_ID.test(id) && !found.includes(id));
    if (given.length > 0) {
      // Another deployment's instance is never terminated, even by id.
      const listed = await this.api.describeInstances(at.region, [{ Name: 'instance-id', Values: given }]);
      const foreign = new Set(listed.filter((i) => (tagOf(i, OWNER_TAG) ?? this.deployment) !== this.deployment).map((i) => i.InstanceId));
      given = given.filter((id) => !foreign.has(id));
    }
    // Two calls: one unknown id fails a whole TerminateInstances batch with NotFound, and the
    // instances found by identity must be terminated regardless.
    for (const batch of [found, given]) {
      try {
        await this.api.terminate(at.region, batch);
      } catch (err) {
        if (!(err instanceof ProviderError) || (err.code !== 'InvalidInstanceID.NotFound' && err.code !== 'InvalidInstanceID.Malformed')) throw err;
      }
    }
  }

  /** Capacity blocks on offer for the query (./blocks.ts); read-only. */
  async blockOfferings(q: BlockQuery): Promise<BlockOffering[]> {
    return blockOfferings({ cloud: this.name, api: this.api, deployment: this.deployment, regions: this.regions }, q);
  }

  /** Buy a capacity block once per key (./blocks.ts): a retry returns the block already bought. */
  async buyBlock(offering: BlockOffering, idempotencyKey: string): Promise<ReservationInfo> {
    return buyBlock({ cloud: this.name, api: this.api, deployment: this.deployment, regions: this.regions }, offering, idempotencyKey);
  }

  /** This deployment's per-VM security groups in the region (key pairs are not per VM: the key travels in user data). */
  async sideInventory(at: Location): Promise<SideResource[]> {
    return (await this.api.ownedSecurityGroups(at.region, this.deployment)).map((g) => ({ vmName: g.vmName, kind: 'security-group', id: g.groupId }));
  }

  /** Delete the per-VM security group; while a terminating instance still uses it, Transient. */
  override async cleanup(at: Location, vmName: string): Promise<void> {
    const groups = await this.api.securityGroupIdsByName(at.region, ownedName(vmName, this.deployment), vmName, this.deployment);
    for (const groupId of groups) {
      try {
        await this.api.deleteSecurityGroup(at.region, groupId);
      } catch (err) {
        if (!(err instanceof ProviderError) || err.code !== 'InvalidGroup.NotFound') throw err;
      }
    }
  }
}

/** The AWS provider when credentials are configured (keys, a profile or ~/.aws/credentials), else undefined. */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): CloudProvider | undefined {
  if (!hasCredentials(env) || (env.AWS_ACCESS_KEY_ID && !env.AWS_SECRET_ACCESS_KEY)) return undefined;
  return new AwsProvider({ ...opts, env });
}
