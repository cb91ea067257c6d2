/**
 * The EC2 Spot market's two read calls, sent through the same transport as ./api.ts (whose
 * `Ec2Api.spot` this is). Neither is made for an on-demand-only plan or an instance that is not
 * spot. What their answers mean is in ./spot.ts.
 *
 * - DescribeSpotPriceHistory (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSpotPriceHistory.html):
 *   "When you specify a start and end time, the operation returns the prices of the instance types
 *   within that time range. It also returns the last price change before the start time, which is
 *   the effective price as of the start time": StartTime = EndTime = now reads the price in force
 *   now, per AZ. `ProductDescriptions: ['Linux/UNIX']` (the AMIs gpuprov boots are Linux).
 * - DescribeSpotInstanceRequests (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSpotInstanceRequests.html):
 *   by the `spot-instance-request-id` filter rather than `SpotInstanceRequestIds`, so a request EC2
 *   no longer lists ("deleted four hours after they are canceled and their instances are
 *   terminated") is absent from the answer instead of failing the whole call.
 */
import type { _InstanceType } from '@aws-sdk/client-ec2';
import { z } from 'zod';
import type { Ec2Transport } from './ec2-transport';
import type { SpotPrice, SpotRequestStatus } from './spot';

const SpotPrices = z.object({
  SpotPriceHistory: z
    .array(z.object({ AvailabilityZone: z.string(), InstanceType: z.string(), SpotPrice: z.string(), Timestamp: z.date().optional() }))
    .default([]),
  NextToken: z.string().nullish(),
});

const SpotRequests = z.object({
  SpotInstanceRequests: z
    .array(
      z.object({
        SpotInstanceRequestId: z.string(),
        InstanceId: z.string().optional(),
        Status: z.object({ Code: z.string().optional(), Message: z.string().optional(), UpdateTime: z.date().optional() }).optional(),
      }),
    )
    .default([]),
  NextToken: z.string().nullish(),
});

/** Ids per call: one filter's values are kept to 200 so a call never grows with the fleet. */
const FILTER_VALUES = 200;

export class SpotApi {
  constructor(private readonly ec2: Ec2Transport) {}

  /** The Linux/UNIX spot price in force at `now` of each of `types` in each AZ of the region, every page. */
  async prices(region: string, types: string[], now: Date): Promise<SpotPrice[]> {
    return this.ec2.pages(
      region,
      'DescribeSpotPriceHistory',
      SpotPrices,
      (c, { DescribeSpotPriceHistoryCommand }, NextToken) =>
        c.send(
          new DescribeSpotPriceHistoryCommand({
            InstanceTypes: types as _InstanceType[],
            ProductDescriptions: ['Linux/UNIX'],
            StartTime: now,
            EndTime: now,
            MaxResults: 1000,
            NextToken,
          }),
        ),
      (page) =>
        page.SpotPriceHistory.flatMap((p) => {
          const pricePerHour = Number(p.SpotPrice);
          if (!Number.isFinite(pricePerHour) || pricePerHour <= 0) return [];
          return [{ zone: p.AvailabilityZone, instanceType: p.InstanceType, pricePerHour, ...(p.Timestamp ? { changedAt: p.Timestamp.toISOString() } : {}) }];
        }),
    );
  }

  /** The status of the spot requests with these ids: one paginated call per 200 ids (one for any real deployment's region). */
  async requests(region: string, ids: readonly string[]): Promise<SpotRequestStatus[]> {
    const out: SpotRequestStatus[] = [];
    for (let i = 0; i < ids.length; i += FILTER_VALUES) {
      const batch = ids.slice(i, i + FILTER_VALUES);
      const found = await this.ec2.pages(
        region,
        'DescribeSpotInstanceRequests',
        SpotRequests,
        (c, { DescribeSpotInstanceRequestsCommand }, NextToken) =>
          c.send(
            new DescribeSpotInstanceRequestsCommand({
              Filters: [{ Name: 'spot-instance-request-id', Values: batch }],
              MaxResults: Math.max(5, this.ec2.pageSize),
              NextToken,
            }),
          ),
        (page) =>
          page.SpotInstanceRequests.map((r) => ({
            requestId: r.SpotInstanceRequestId,
            ...(r.InstanceId ? { instanceId: r.InstanceId } : {}),
            ...(r.Status?.Code ? { code: r.Status.Code } : {}),
            ...(r.Status?.Message ? { message: r.Status.Message } : {}),
            ...(r.Status?.UpdateTime ? { updatedAt: r.Status.UpdateTime.toISOString() } : {}),
          })),
      );
      out.push(...found);
    }
    return out;
  }
}
