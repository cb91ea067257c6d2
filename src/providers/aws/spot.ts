/**
 * The EC2 Spot market, pure: the create's market options, spot offers from the price history, and
 * a spot instance's reclaim read from the API (the calls are in ./spot-api.ts).
 *
 * Create: RunInstances `InstanceMarketOptions` {MarketType `spot`, SpotOptions {SpotInstanceType
 * `one-time`, InstanceInterruptionBehavior `terminate`}} (botocore's ec2 model, SpotMarketOptions;
 * https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_SpotMarketOptions.html). No `MaxPrice`:
 * "We do not recommend using this parameter because it can lead to increased interruptions. If you
 * do not specify this parameter, you will pay the current Spot price" (the on-demand price is then
 * the cap). `--max-price` is a plan filter on the price listed now; passed as MaxPrice it would
 * become a reclaim trigger (`instance-terminated-by-price`) as soon as the spot price moved past it.
 *
 * Offers: one per AZ with a price (spot prices and spot capacity are per AZ pool), so a stock-out
 * in one AZ blocks only that AZ's spot offer (its key carries the zone and `/spot`);
 * `pricePerHour` is that AZ's spot price read now, `onDemandPricePerHour` the on-demand offer's.
 *
 * Reclaim (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-request-status.html, status
 * codes; `UpdateTime` is "the date and time of the most recent status update"): DescribeInstances
 * gives a spot instance `InstanceLifecycle: spot` and its `SpotInstanceRequestId`; the request's
 * `Status.Code` says what the market does to it:
 *
 * | Status.Code (or instance StateReason.Code)                        | preemption          | noticeAt            | deadline          |
 * |--------------------------------------------------------------------|---------------------|---------------------|-------------------|
 * | `marked-for-termination`, `marked-for-stop`                        | yes (still running) | Status.UpdateTime   | noticeAt + 2 min  |
 * | `instance-terminated-by-price`, `-no-capacity`, `-capacity-oversubscribed`, `-launch-group-constraint`, `instance-stopped-by-price`, `-no-capacity` | yes (reclaimed) | Status.UpdateTime | — |
 * | any other code (`fulfilled`, `instance-terminated-by-user`, …)     | no                  |                     |                   |
 * | no such code, StateReason `Server.SpotInstanceTermination` / `Server.SpotInstanceShutdown` | yes (reclaimed) | first seen (now) | — |
 *
 * The deadline: "A Spot Instance interruption notice is a warning that is issued two minutes before
 * Amazon EC2 stops or terminates your Spot Instance", present "if your Spot Instance is marked to be
 * stopped or terminated" (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html;
 * best effort, and none before hibernation, which gpuprov never asks for). The exact action time is
 * published only inside the instance (instance metadata `spot/instance-action`) and as an
 * EventBridge event, not by the EC2 API, so the deadline is the marking time plus two minutes.
 * StateReason codes: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StateReason.html.
 * A terminated instance is gone to `observe` (./map.ts), so a reclaim is reported while the
 * instance is marked, shutting down or stopped.
 */
import type { RunInstancesCommandInput } from '@aws-sdk/client-ec2';
import { ProviderError } from '../../core/errors';
import type { Offer, Preemption } from '../../core/provider';
import type { Ec2Instance } from './map';

/** One AZ's spot price in force (DescribeSpotPriceHistory). */
export interface SpotPrice {
  zone: string;
  instanceType: string;
  pricePerHour: number;
  /** When the price last changed (the history entry's Timestamp). */
  changedAt?: string;
}

/** One spot request's status (DescribeSpotInstanceRequests). */
export interface SpotRequestStatus {
  requestId: string;
  instanceId?: string;
  code?: string;
  message?: string;
  updatedAt?: string;
}

/** RunInstances' market options of a spot create. */
export const SPOT_MARKET: NonNullable<RunInstancesCommandInput['InstanceMarketOptions']> = {
  MarketType: 'spot',
  SpotOptions: { SpotInstanceType: 'one-time', InstanceInterruptionBehavior: 'terminate' },
};

/** The two-minute interruption notice (see the header). */
export const NOTICE_MS = 2 * 60_000;

/** Request status codes that say the market is reclaiming (marked) or has reclaimed the instance. */
export const RECLAIM_CODES: Readonly<Record<string, 'marked' | 'reclaimed'>> = {
  'marked-for-termination': 'marked',
  'marked-for-stop': 'marked',
  'instance-terminated-by-price': 'reclaimed',
  'instance-terminated-no-capacity': 'reclaimed',
  'instance-terminated-capacity-oversubscribed': 'reclaimed',
  'instance-terminated-launch-group-constraint': 'reclaimed',
  'instance-stopped-by-price': 'reclaimed',
  'instance-stopped-no-capacity': 'reclaimed',
};

/** Instance StateReason codes of a market reclaim. */
export const RECLAIM_STATE_REASONS: readonly string[] = ['Server.SpotInstanceTermination', 'Server.SpotInstanceShutdown'];

/**
 * The spot offers beside `onDemand` (regional offers of the same types): one per AZ price of a
 * type the region offers on demand, the latest entry per AZ and type, priced as read at `readAt`.
 */
export function spotOffers(onDemand: readonly Offer[], prices: readonly SpotPrice[], region: string, readAt: string): Offer[] {
  const latest = new Map<string, SpotPrice>();
  for (const p of prices) {
    const k = `${p.zone}/${p.instanceType}`;
    const seen = latest.get(k);
    if (!seen || (p.changedAt ?? '') > (seen.changedAt ?? '')) latest.set(k, p);
  }
  const out: Offer[] = [];
  for (const p of [...latest.values()].sort((a, b) => a.zone.localeCompare(b.zone))) {
    const od = onDemand.find((o) => o.region === region && o.instanceType === p.instanceType);
    if (!od) continue;
    out.push({
      ...od,
      zone: p.zone,
      pricePerHour: p.pricePerHour,
      ...(od.pricePerHour !== undefined ? { onDemandPricePerHour: od.pricePerHour } : {}),
      priceSource: 'api',
      pricedAt: readAt,
      spot: true,
      market: 'spot',
    });
  }
  return out;
}

/** The reclaim of a spot instance as the API shows it (the header's table); undefined when none. */
export function preemptionOf(i: Ec2Instance, request: SpotRequestStatus | undefined, now: string): Preemption | undefined {
  if (i.InstanceLifecycle !== 'spot') return undefined;
  const phase = request?.code ? RECLAIM_CODES[request.code] : undefined;
  if (phase && request?.code) {
    const noticeAt = request.updatedAt ?? now;
    const detail = request.message ? `${request.code}: ${request.message}` : request.code;
    return phase === 'marked' ? { noticeAt, deadline: new Date(Date.parse(noticeAt) + NOTICE_MS).toISOString(), detail } : { noticeAt, detail };
  }
  const reason = i.StateReason?.Code;
  if (reason && RECLAIM_STATE_REASONS.includes(reason)) return { noticeAt: now, detail: i.StateReason?.Message || reason };
  return undefined;
}

/**
 * A spot create's error, scoped to the spot offer: Capacity (InsufficientInstanceCapacity,
 * UnfulfillableCapacity, SpotMaxPriceTooLow: ./errors.ts) and Unavailable block the offer only,
 * whose key carries the AZ and `/spot`, so the same type on demand is still tried. Quota keeps its
 * region scope (MaxSpotInstanceCountExceeded is a spot quota, but a region block is what the search
 * promises after any Quota); everything else is unchanged.
 */
export function spotScoped(err: unknown): unknown {
  if (!(err instanceof ProviderError) || (err.kind !== 'Capacity' && err.kind !== 'Unavailable') || err.block === 'offer') return err;
  return new ProviderError(err.kind, err.message, { block: 'offer', ...(err.code ? { code: err.code } : {}), cause: err.cause ?? err });
}
