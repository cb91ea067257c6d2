/**
 * The EC2 calls of reserved capacity, sent through the same transport as ./api.ts (whose
 * `Ec2Api.reserved` this is). None is made for a plan without `request.reserved`. What their
 * answers mean is in ./reserved.ts; the block purchase's once-only rule is in ./blocks.ts.
 *
 * - DescribeCapacityReservations (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeCapacityReservations.html):
 *   by id (`CapacityReservationIds`; an id the region does not know answers
 *   InvalidCapacityReservationId.NotFound or .Malformed, read here as "none") or by filters
 *   (`state`, `instance-type`, `tag:<key>`).
 * - DescribeCapacityBlockOfferings (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeCapacityBlockOfferings.html):
 *   InstanceType, InstanceCount, CapacityDurationHours (required), StartDateRange.
 * - PurchaseCapacityBlock (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_PurchaseCapacityBlock.html):
 *   CapacityBlockOfferingId, InstancePlatform, TagSpecifications; it has no ClientToken.
 */
import type { Filter, Tag } from '@aws-sdk/client-ec2';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import type { Ec2Transport } from './ec2-transport';
import { LINUX_PLATFORM, type BlockOfferingRow, type CapacityReservationRow } from './reserved';

const Reservation = z.object({
  CapacityReservationId: z.string(),
  InstanceType: z.string(),
  AvailabilityZone: z.string(),
  InstancePlatform: z.string().optional(),
  Tenancy: z.string().optional(),
  TotalInstanceCount: z.number().default(0),
  AvailableInstanceCount: z.number().default(0),
  State: z.string(),
  StartDate: z.date().optional(),
  EndDate: z.date().optional(),
  ReservationType: z.string().optional(),
  Tags: z.array(z.object({ Key: z.string().optional(), Value: z.string().optional() })).optional(),
});
type Reservation = z.infer<typeof Reservation>;

const Reservations = z.object({ CapacityReservations: z.array(Reservation).default([]), NextToken: z.string().nullish() });

const Offerings = z.object({
  CapacityBlockOfferings: z
    .array(
      z.object({
        CapacityBlockOfferingId: z.string(),
        InstanceType: z.string(),
        AvailabilityZone: z.string(),
        InstanceCount: z.number(),
        StartDate: z.date(),
        EndDate: z.date(),
        CapacityBlockDurationHours: z.number(),
        UpfrontFee: z.string(),
        CurrencyCode: z.string().default('USD'),
      }),
    )
    .default([]),
  NextToken: z.string().nullish(),
});

const Purchased = z.object({ CapacityReservation: Reservation });

/** The codes of an id no reservation of the region has (the plan lists nothing for it). */
const UNKNOWN_ID = new Set(['InvalidCapacityReservationId.NotFound', 'InvalidCapacityReservationId.Malformed']);

function rowOf(r: Reservation): CapacityReservationRow {
  const tags: Record<string, string> = {};
  for (const t of r.Tags ?? []) if (t.Key !== undefined) tags[t.Key] = t.Value ?? '';
  return {
    id: r.CapacityReservationId,
    instanceType: r.InstanceType,
    zone: r.AvailabilityZone,
    ...(r.InstancePlatform ? { platform: r.InstancePlatform } : {}),
    ...(r.Tenancy ? { tenancy: r.Tenancy } : {}),
    total: r.TotalInstanceCount,
    free: r.AvailableInstanceCount,
    state: r.State,
    ...(r.StartDate ? { start: r.StartDate.toISOString() } : {}),
    ...(r.EndDate ? { end: r.EndDate.toISOString() } : {}),
    ...(r.ReservationType ? { reservationType: r.ReservationType } : {}),
    tags,
  };
}

/** What DescribeCapacityBlockOfferings is asked for one instance type. */
export interface BlockOfferingAsk {
  instanceType: string;
  count: number;
  durationHours: number;
  startAfter: Date;
}

export class ReservedApi {
  constructor(private readonly ec2: Ec2Transport) {}

  /** The reservations with this id in the region: one, or none when the region does not know it. */
  async byId(region: string, id: string): Promise<CapacityReservationRow[]> {
    try {
      return await this.list(region, { CapacityReservationIds: [id] });
    } catch (err) {
      if (err instanceof ProviderError && err.code !== undefined && UNKNOWN_ID.has(err.code)) return [];
      throw err;
    }
  }

  /** The reservations of the region matching the filters, every page. */
  async matching(region: string, filters: Filter[]): Promise<CapacityReservationRow[]> {
    return this.list(region, { Filters: filters });
  }

  private async list(region: string, ask: { CapacityReservationIds?: string[]; Filters?: Filter[] }): Promise<CapacityReservationRow[]> {
    return this.ec2.pages(
      region,
      'DescribeCapacityReservations',
      Reservations,
      (c, { DescribeCapacityReservationsCommand }, NextToken) =>
        c.send(new DescribeCapacityReservationsCommand({ ...ask, ...(ask.Filters ? { MaxResults: Math.max(5, this.ec2.pageSize) } : {}), NextToken })),
      (page) => page.CapacityReservations.map(rowOf),
    );
  }

  /** The capacity blocks on offer for one type in the region, every page. */
  async blockOfferings(region: string, ask: BlockOfferingAsk): Promise<BlockOfferingRow[]> {
    return this.ec2.pages(
      region,
      'DescribeCapacityBlockOfferings',
      Offerings,
      (c, { DescribeCapacityBlockOfferingsCommand }, NextToken) =>
        c.send(
          new DescribeCapacityBlockOfferingsCommand({
            InstanceType: ask.instanceType,
            InstanceCount: ask.count,
            CapacityDurationHours: ask.durationHours,
            StartDateRange: ask.startAfter,
            MaxResults: Math.max(5, this.ec2.pageSize),
            NextToken,
          }),
        ),
      (page) =>
        page.CapacityBlockOfferings.map((o) => ({
          offeringId: o.CapacityBlockOfferingId,
          instanceType: o.InstanceType,
          zone: o.AvailabilityZone,
          count: o.InstanceCount,
          start: o.StartDate.toISOString(),
          end: o.EndDate.toISOString(),
          durationHours: o.CapacityBlockDurationHours,
          upfrontFee: o.UpfrontFee,
          currency: o.CurrencyCode,
        })),
    );
  }

  /** Buy one block offering (billed at once), the reservation tagged with `tags`; returns the reservation it made. */
  async purchaseBlock(region: string, offeringId: string, tags: Tag[]): Promise<CapacityReservationRow> {
    const out = await this.ec2.call(region, 'PurchaseCapacityBlock', Purchased, (c, { PurchaseCapacityBlockCommand }) =>
      c.send(
        new PurchaseCapacityBlockCommand({
          CapacityBlockOfferingId: offeringId,
          InstancePlatform: LINUX_PLATFORM,
          TagSpecifications: [{ ResourceType: 'capacity-reservation', Tags: tags }],
        }),
      ),
    );
    return rowOf(out.CapacityReservation);
  }
}
