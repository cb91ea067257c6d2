/**
 * offersWorkflow: every configured cloud's offers with prices, computed on the worker so that
 * cloud credentials never leave it. Short-lived; read-only.
 */
import type { BlockOfferingsInput, BlockOfferingsOutput, PlanInput, PlanOutput } from '../activities';
import { reading } from './proxies';
import { withTuning } from '../core/tuning';

export async function offersWorkflow(input: PlanInput): Promise<PlanOutput> {
  return reading(withTuning({ mutateMaxAttempts: 3 }), 'plan offers (read-only)').planOffers(input);
}

/** blockOfferingsWorkflow: the capacity blocks on sale (`offers --capacity-block`), computed on the worker. Read-only. */
export async function blockOfferingsWorkflow(input: BlockOfferingsInput): Promise<BlockOfferingsOutput> {
  return reading(withTuning({ mutateMaxAttempts: 3 }), 'list capacity block offerings (read-only)').blockOfferings(input);
}
