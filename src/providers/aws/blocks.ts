/**
 * Capacity Blocks for ML: the blocks a query could buy (`blockOfferings`) and the purchase, made
 * once (`buyBlock`). The calls are in ./reserved-api.ts; a bought block is a capacity reservation
 * of type `capacity-block` (./reserved.ts), which the plan then lists by its id.
 *
 * Offerings: one DescribeCapacityBlockOfferings per region and instance type. The types are the
 * query's, else the catalog's GPU types that match its GPU (model, at least its count per
 * instance) among the types AWS sells blocks of (`BLOCK_TYPES`: "p5.48xlarge, p5e.48xlarge,
 * p5en.48xlarge, p4d.24xlarge, trn1.32xlarge, and trn2.48xlarge",
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html). A region that does
 * not sell a type (Unavailable) offers nothing of it; any other error fails the listing.
 *
 * Buying once: PurchaseCapacityBlock has no ClientToken (botocore's ec2 model: DryRun,
 * TagSpecifications, CapacityBlockOfferingId, InstancePlatform), so the purchase tags the
 * reservation it makes (`TagSpecifications`, resource type `capacity-reservation`) with the
 * deployment (`gpuprov-owner`), `gpuprov-block-key` = `createKeyOf(idempotencyKey)` and the
 * offering (`gpuprov-block-offering`), and every purchase first asks DescribeCapacityReservations
 * for a reservation carrying this deployment's tag and this key:
 *
 * | found by the key's tags           | result                                                          |
 * |-----------------------------------|-----------------------------------------------------------------|
 * | none                              | PurchaseCapacityBlock, its reservation returned                 |
 * | one, state `payment-failed`       | Capacity: the purchase was refused (never bought again)         |
 * | one, any other state              | it is returned; nothing is bought                               |
 *
 * Hazard: EC2 is eventually consistent; a retry made before a purchase whose answer was lost shows
 * in DescribeCapacityReservations would buy again. The activity's retry interval (seconds) is what
 * stands between them; EC2 offers no token to close the gap.
 */
import { ProviderError } from '../../core/errors';
import { gpuModelMatches } from '../../core/gpu-names';
import { OWNER_TAG } from '../../core/provider';
import type { BlockOffering, BlockQuery, ReservationInfo } from '../../core/reservation';
import { createKeyOf } from '../create-key';
import type { Ec2Api } from './api';
import { CATALOG } from './catalog';
import { BLOCK_KEY_TAG, BLOCK_OFFERING_TAG, reservationInfoOf, type BlockOfferingRow } from './reserved';

/** The instance types AWS sells capacity blocks of (the header's source). */
export const BLOCK_TYPES: readonly string[] = ['p5.48xlarge', 'p5e.48xlarge', 'p5en.48xlarge', 'p4d.24xlarge', 'trn1.32xlarge', 'trn2.48xlarge'];

/** What the block calls need of the adapter. */
export interface BlockContext {
  cloud: string;
  api: Ec2Api;
  deployment: string;
  /** The configured regions (a query without regions asks these). */
  regions: readonly string[];
}

/** The instance types a query asks about (the header). */
export function blockTypesFor(q: BlockQuery): string[] {
  if (q.instanceTypes?.length) return [...q.instanceTypes];
  return CATALOG.filter(
    (e) =>
      BLOCK_TYPES.includes(e.instanceType) &&
      e.gpuModel !== undefined &&
      (q.gpuModel === undefined || gpuModelMatches(q.gpuModel, e.gpuModel, e.gpuMemoryGiB)) &&
      (q.gpuCount === undefined || e.gpuCount >= q.gpuCount),
  ).map((e) => e.instanceType);
}

/** One offering as the contract carries it. */
export function blockOfferingOf(cloud: string, region: string, o: BlockOfferingRow): BlockOffering {
  return {
    offeringId: o.offeringId,
    cloud,
    region,
    zone: o.zone,
    instanceType: o.instanceType,
    count: o.count,
    start: o.start,
    end: o.end,
    durationHours: o.durationHours,
    upfrontPrice: Number(o.upfrontFee),
    currency: o.currency,
  };
}

/** The blocks on offer for the query, soonest first, then cheapest. */
export async function blockOfferings(ctx: BlockContext, q: BlockQuery): Promise<BlockOffering[]> {
  const regions = q.regions?.length ? q.regions : ctx.regions;
  const types = blockTypesFor(q);
  const startAfter = q.startAfter ? new Date(q.startAfter) : new Date();
  const asks = regions.flatMap((region) => types.map((instanceType) => ({ region, instanceType })));
  const found = await Promise.all(
    asks.map(async ({ region, instanceType }) => {
      try {
        const rows = await ctx.api.reserved.blockOfferings(region, { instanceType, count: q.count, durationHours: q.durationHours, startAfter });
        return rows.map((o) => blockOfferingOf(ctx.cloud, region, o));
      } catch (err) {
        if (err instanceof ProviderError && err.kind === 'Unavailable') return [];
        throw err;
      }
    }),
  );
  return found.flat().sort((a, b) => a.start.localeCompare(b.start) || a.upfrontPrice - b.upfrontPrice);
}

/** Buy the offering once per idempotency key (the header's table); the reservation to launch into. */
export async function buyBlock(ctx: BlockContext, offering: BlockOffering, idempotencyKey: string): Promise<ReservationInfo> {
  if (offering.cloud !== ctx.cloud) throw new ProviderError('InvalidRequest', `AWS buyBlock: offering ${offering.offeringId} is ${offering.cloud}'s`);
  const key = createKeyOf(idempotencyKey);
  const earlier = (
    await ctx.api.reserved.matching(offering.region, [
      { Name: `tag:${OWNER_TAG}`, Values: [ctx.deployment] },
      { Name: `tag:${BLOCK_KEY_TAG}`, Values: [key] },
    ])
  ).filter((r) => r.tags[OWNER_TAG] === ctx.deployment && r.tags[BLOCK_KEY_TAG] === key);
  const row =
    earlier[0] ??
    (await ctx.api.reserved.purchaseBlock(offering.region, offering.offeringId, [
      { Key: 'Name', Value: `gpuprov-block-${offering.instanceType}` },
      { Key: OWNER_TAG, Value: ctx.deployment },
      { Key: BLOCK_KEY_TAG, Value: key },
      { Key: BLOCK_OFFERING_TAG, Value: offering.offeringId },
    ]));
  if (row.state === 'payment-failed') {
    throw new ProviderError('Capacity', `AWS ${offering.region}: the purchase of capacity block ${offering.offeringId} was refused (payment failed)`, {
      block: 'offer',
      code: 'payment-failed',
    });
  }
  return reservationInfoOf(row);
}
