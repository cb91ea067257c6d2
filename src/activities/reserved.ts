/**
 * Capacity blocks (issue 31): the offerings of every cloud that sells them (`blockOfferings`,
 * read-only, for `offers --capacity-block` and for the launch to find the offering it buys), and
 * the one purchase (`buyCapacityBlock`, idempotent by the key the workflow derives: a retry or a
 * replay returns the block already bought, never a second one).
 */
import { ProviderError } from '../core/errors';
import type { BlockOffering, BlockQuery, ReservationInfo } from '../core/reservation';
import { defaultClouds } from '../providers/default-registry';
import { activityLog } from './activity-log';
import { providerOf } from './attempt';
import type { ActivityDeps } from './deps';
import { toFailure } from './failures';

export interface BlockOfferingsInput {
  clouds?: string[];
  query: BlockQuery;
  /** Only this offering (the launch looking for what it buys): a missing one fails Capacity. */
  offeringId?: string;
}

export interface BlockOfferingsOutput {
  offerings: BlockOffering[];
  /** Clouds that could not list blocks, and why. */
  skipped: { cloud: string; kind: string; message: string }[];
}

export interface BuyBlockInput {
  offering: BlockOffering;
  idempotencyKey: string;
}

export function createReservedActivities(deps: ActivityDeps) {
  return {
    /** Every chosen cloud's block offerings for the query, cheapest first; a cloud that sells none is skipped with its reason. */
    async blockOfferings(input: BlockOfferingsInput): Promise<BlockOfferingsOutput> {
      const clouds = input.clouds?.length ? input.clouds : defaultClouds(deps.registry);
      const out: BlockOfferingsOutput = { offerings: [], skipped: [] };
      for (const cloud of clouds) {
        const p = providerOf(deps.registry, cloud);
        if (!p.blockOfferings) {
          out.skipped.push({ cloud, kind: 'InvalidRequest', message: `${cloud} sells no capacity blocks` });
          continue;
        }
        try {
          out.offerings.push(...(await p.blockOfferings(input.query)));
        } catch (err) {
          if (!(err instanceof ProviderError) || err.kind === 'Transient') throw toFailure(err);
          out.skipped.push({ cloud, kind: err.kind, message: err.message });
        }
      }
      out.offerings.sort((a, b) => a.upfrontPrice - b.upfrontPrice || a.start.localeCompare(b.start));
      if (input.offeringId === undefined) return out;
      const found = out.offerings.filter((o) => o.offeringId === input.offeringId);
      if (found.length === 0) {
        const why = out.skipped.map((s) => `${s.cloud}: ${s.message}`).join('; ');
        throw toFailure(
          new ProviderError(
            'Capacity',
            `capacity block offering ${input.offeringId} is no longer offered for this query${why ? ` (${why})` : ''}; list them again: provision offers --capacity-block`,
          ),
        );
      }
      return { offerings: found, skipped: out.skipped };
    },

    /** Buy the block once (by the key); the reservation to launch into. */
    async buyCapacityBlock(input: BuyBlockInput): Promise<ReservationInfo> {
      const p = providerOf(deps.registry, input.offering.cloud);
      if (!p.buyBlock) throw toFailure(new ProviderError('InvalidRequest', `${input.offering.cloud} sells no capacity blocks`));
      try {
        const info = await p.buyBlock(input.offering, input.idempotencyKey);
        activityLog('info', 'capacity block bought', { offering: input.offering.offeringId, reservation: info.id, upfrontPrice: input.offering.upfrontPrice });
        return info;
      } catch (err) {
        throw toFailure(err);
      }
    },
  };
}
