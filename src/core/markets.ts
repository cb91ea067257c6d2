/**
 * `--spot` (`VmSpec.spot`) against what each cloud sells (its row's `markets`, src/core/clouds.ts,
 * carried on the adapter's capabilities): the one pure check the CLI (exit 2 when no named cloud
 * can serve the request) and `planOffers` (skips such a cloud, with the reason) both run, and the
 * plan's order of markets.
 *
 * | `spot`  | the cloud sells spot | CLI, clouds named                        | plan                                         |
 * |---------|----------------------|------------------------------------------|----------------------------------------------|
 * | absent  | either               | fine                                     | its on-demand offers                         |
 * | `only`  | yes                  | fine                                     | its spot offers                              |
 * | `only`  | no                   | refused when no named cloud sells spot   | skipped: "X sells no spot", the spot clouds  |
 * | `auto`  | yes                  | fine                                     | its spot offers, then its on-demand ones     |
 * | `auto`  | no                   | fine (on-demand is asked for too)        | its on-demand offers                         |
 *
 * Order under `auto` (`spotFirst`): every spot offer before every on-demand one, each market in the
 * order it came (price, or the user's cloud order, with the capacity memory's demotion inside it).
 */
import { cloudsWhere, listed } from './clouds';
import { marketOf } from './offers';
import type { Capabilities, Market, Offer, SpotMode } from './provider';

/** The markets of capabilities that do not say (histories and adapters from before markets): on-demand. */
export function marketsOf(caps: Pick<Capabilities, 'markets'>): readonly Market[] {
  return caps.markets ?? ['on-demand'];
}

/** The clouds of the table that sell spot, in table order. */
export function spotClouds(): string[] {
  return cloudsWhere((f) => f.markets.includes('spot'));
}

/** Why a cloud cannot serve `--spot`: what is wrong and the fix. */
export interface MarketProblem {
  message: string;
  fix: string;
}

/** The reason `cloud` (with these capabilities) cannot serve the `spot` mode, or undefined. */
export function marketProblem(cloud: string, caps: Pick<Capabilities, 'markets'>, spot: SpotMode | undefined): MarketProblem | undefined {
  if (spot !== 'only' || marketsOf(caps).includes('spot')) return undefined;
  const sellers = spotClouds();
  const choose = sellers.length > 0 ? `, or choose a cloud that sells spot: ${listed(sellers)}` : ' (no cloud of this build sells spot yet)';
  return { message: `${cloud} sells no spot (on-demand only)`, fix: `use --spot auto (on-demand when no spot offer is left), or leave --spot out${choose}` };
}

/** Under `auto`, every spot offer before every on-demand one, each market in its given order; otherwise `offers` as given. */
export function spotFirst<O extends Pick<Offer, 'market' | 'spot'>>(offers: readonly O[], spot: SpotMode | undefined): O[] {
  if (spot !== 'auto') return [...offers];
  return [...offers.filter((o) => marketOf(o) === 'spot'), ...offers.filter((o) => marketOf(o) !== 'spot')];
}
