/**
 * The one offer filter: adapters list what their cloud has, `matchOffers` decides what matches a
 * request, for every cloud alike (`planOffers` applies it). Pure.
 *
 * An offer is kept when it passes every row, tried in this order; the first row it fails is the
 * reason it was dropped:
 *
 * | row             | keeps the offer when                                                        |
 * |-----------------|-----------------------------------------------------------------------------|
 * | `region`        | no regions asked, or its region is one of them                              |
 * | `instance-type` | no types asked, or its type is one of them                                  |
 * | `gpu-model`     | GPU asked: the offer has a GPU of that model (src/core/gpu-names.ts)        |
 * | `gpu-count`     | GPU asked: exactly `count` GPUs (`H100:1`), or at least (`H100:4+`)          |
 * | `has-gpu`       | no GPU asked: the offer has no GPU (CPU types only, as before); under a reservation or block ask any type (the reservation names it) |
 * | `market`        | no `spot`: on-demand; `spot: only`: spot; `spot: auto`: spot or on-demand; a reservation or block (`reserved`): reserved only |
 * | `price-unknown` | no price cap, or the offer has a price (an unknown price never passes a cap)|
 * | `price`         | no price cap, or the price is at or below it                                |
 *
 * Order is kept: the matched offers are the input offers, in the input order.
 */
import { gpuModelMatches } from './gpu-names';
import { marketOf } from './offers';
import type { GpuRequest, Market, Offer, ResourceRequest } from './provider';

export type DropReason = 'region' | 'instance-type' | 'gpu-model' | 'gpu-count' | 'has-gpu' | 'market' | 'price-unknown' | 'price';

/** What the matcher reads of a request. */
export type MatchRequest = Pick<ResourceRequest, 'gpu' | 'regions' | 'instanceTypes' | 'maxPricePerHour' | 'spot' | 'reserved'>;

/** A reservation or block ask: the reservation fixes the machine, so no GPU need be asked. */
function targetsReservation(req: Pick<ResourceRequest, 'reserved'>): boolean {
  return req.reserved?.kind === 'reservation' || req.reserved?.kind === 'capacity-block';
}

/** The markets a request takes (the `market` row). */
export function marketsAsked(req: Pick<ResourceRequest, 'spot' | 'reserved'>): readonly Market[] {
  // Targeted: a full reservation is a Capacity answer, never a silent on-demand launch.
  if (targetsReservation(req)) return ['reserved'];
  if (req.spot === 'only') return ['spot'];
  return req.spot === 'auto' ? ['spot', 'on-demand'] : ['on-demand'];
}

export interface Dropped {
  offer: Offer;
  reason: DropReason;
}

export interface OfferMatch {
  /** The offers that match, in input order. */
  offers: Offer[];
  /** Every other offer with the first row it failed. */
  dropped: Dropped[];
}

/** `H100:1`, `H100:4+`. */
export function formatGpuRequest(g: GpuRequest): string {
  return `${g.model}:${g.count}${g.atLeast ? '+' : ''}`;
}

/** An offer's GPU count (0 for CPU types). */
function gpusOf(o: Offer): number {
  return o.gpu?.count ?? 0;
}

/** `have` GPUs serve the ask: exactly `count`, or at least `count` with `atLeast`. */
export function gpuCountFits(have: number, want: GpuRequest): boolean {
  return want.atLeast ? have >= want.count : have === want.count;
}

/** The first row of the table the offer fails, or undefined when it matches. */
export function dropReason(o: Offer, req: MatchRequest): DropReason | undefined {
  if (req.regions?.length && !req.regions.includes(o.region)) return 'region';
  if (req.instanceTypes?.length && !req.instanceTypes.includes(o.instanceType)) return 'instance-type';
  if (req.gpu) {
    if (!o.gpu || gpusOf(o) === 0 || !gpuModelMatches(req.gpu.model, o.gpu.model, o.gpu.memoryGiB)) return 'gpu-model';
    if (!gpuCountFits(gpusOf(o), req.gpu)) return 'gpu-count';
  } else if (gpusOf(o) > 0 && !targetsReservation(req)) {
    return 'has-gpu';
  }
  if (!marketsAsked(req).includes(marketOf(o))) return 'market';
  if (req.maxPricePerHour !== undefined) {
    if (o.pricePerHour === undefined) return 'price-unknown';
    if (o.pricePerHour > req.maxPricePerHour) return 'price';
  }
  return undefined;
}

/** Split offers into those that match the request and those that do not (with why). */
export function matchOffers(offers: readonly Offer[], req: MatchRequest): OfferMatch {
  const out: OfferMatch = { offers: [], dropped: [] };
  for (const offer of offers) {
    const reason = dropReason(offer, req);
    if (reason === undefined) out.offers.push(offer);
    else out.dropped.push({ offer, reason });
  }
  return out;
}

function listed(items: Iterable<string>, max = 8): string {
  const all = [...new Set(items)];
  return all.length > max ? `${all.slice(0, max).join(', ')}, …` : all.join(', ');
}

/**
 * Why nothing matched, for humans (the `skipped` line of `provision offers` and of a failed plan).
 * Explains the row the furthest-getting offers failed: a price above the cap says more than a
 * wrong region. The text does not name the cloud; the caller does.
 */
export function explainNoMatch(req: MatchRequest, dropped: readonly Dropped[]): string {
  if (dropped.length === 0) return 'the cloud listed no offers';
  const scope = [req.regions?.length ? 'regions' : '', req.instanceTypes?.length ? 'types' : ''].filter(Boolean).join(' and ');
  const within = scope ? ` in the asked ${scope}` : '';
  const there = scope ? 'there' : 'here';
  const by = (r: DropReason): Offer[] => dropped.filter((d) => d.reason === r).map((d) => d.offer);
  const ask = req.gpu ? `GPU ${formatGpuRequest(req.gpu)}` : 'a CPU-only machine';
  const priced = by('price');
  if (priced.length > 0) {
    const cheapest = Math.min(...priced.map((o) => o.pricePerHour!));
    return `nothing for ${ask}${within} at or below $${req.maxPricePerHour}/h; the cheapest is $${cheapest}/h (${priced.find((o) => o.pricePerHour === cheapest)!.instanceType})`;
  }
  const unpriced = by('price-unknown');
  if (unpriced.length > 0)
    return `${unpriced.length} offer(s) for ${ask} have no known price, so --max-price rules them out (${listed(
      unpriced.map((o) => o.instanceType),
      4,
    )})`;
  const markets = by('market');
  if (markets.length > 0) {
    const fix = req.spot === 'only' ? ' (--spot auto falls back to on-demand)' : ' (--spot or --spot auto asks for spot)';
    return `no ${req.spot === 'only' ? 'spot' : 'on-demand'} offer for ${ask}${within}; ${there} only ${listed(markets.map(marketOf))}${fix}`;
  }
  const counts = by('gpu-count');
  if (counts.length > 0 && req.gpu) {
    const shapes = listed(
      counts.map((o) => `${o.gpu!.count} (${o.instanceType})`),
      6,
    );
    const least = Math.min(...counts.map(gpusOf));
    const hint = least > req.gpu.count ? ` ask --gpu ${req.gpu.model}:${least}, or ${req.gpu.model}:${req.gpu.count}+ for at least ${req.gpu.count}` : '';
    return `no offer has ${req.gpu.atLeast ? 'at least' : 'exactly'} ${req.gpu.count} ${req.gpu.model}; GPU counts ${there}: ${shapes}${hint ? `;${hint}` : ''}`;
  }
  const models = by('gpu-model');
  if (models.length > 0 && req.gpu) {
    const have = models.filter((o) => o.gpu && gpusOf(o) > 0).map((o) => o.gpu!.model);
    return `no ${req.gpu.model}${within || ' here'}; GPUs ${there}: ${have.length ? listed(have, 10) : 'none (CPU types only)'}`;
  }
  if (by('has-gpu').length > 0) return `every offer${within || ' here'} has a GPU; ask for one with --gpu MODEL[:N]`;
  const types = by('instance-type');
  if (types.length > 0) return `none of the types ${req.instanceTypes!.join(', ')} is offered; types here: ${listed(types.map((o) => o.instanceType))}`;
  return `nothing in ${req.regions!.join(', ')}; regions here: ${listed(by('region').map((o) => o.region))}`;
}

/**
 * The kind of "no cloud can serve this request": Credentials when every cloud refused its credentials,
 * Unavailable when every cloud was refused or unreachable as a whole (a Docker engine down or too old),
 * else InvalidRequest (the request matched nothing). The CLI's advice follows it.
 */
export function noOffersKind(skipped: readonly { kind: string }[]): 'Credentials' | 'Unavailable' | 'InvalidRequest' {
  if (skipped.length === 0) return 'InvalidRequest';
  if (skipped.every((s) => s.kind === 'Credentials')) return 'Credentials';
  if (skipped.every((s) => s.kind === 'Credentials' || s.kind === 'Unavailable')) return 'Unavailable';
  return 'InvalidRequest';
}
