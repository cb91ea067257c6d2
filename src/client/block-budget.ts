/**
 * `start --capacity-block OFFERING --yes --budget B`: the offering's upfront price checked against
 * `--budget` before anything starts, so a block dearer than the budget is bad input (exit 2 naming
 * --budget and the fix), not a launch that fails later. The offering is found the way the launch
 * finds it (its query, read-only); one not listed any more is left to the launch (it answers
 * Capacity, or finds the block this name already bought). The workflow checks the price again
 * before it buys (src/workflows/reserved.ts): this check only moves the refusal earlier.
 */
import type { VmSpec } from '../core/api';
import { InputError } from '../core/errors';
import { upfrontProblem } from '../core/reserved-window';
import type { GpuprovClient } from './client';

/** Throws InputError('--budget') when the asked block's upfront price is above the spec's budget. */
export async function checkBlockBudget(client: Pick<GpuprovClient, 'blockOfferings'>, spec: Pick<VmSpec, 'reserved' | 'budgetUsd' | 'clouds'>): Promise<void> {
  const ask = spec.reserved;
  if (ask?.kind !== 'capacity-block' || spec.budgetUsd === undefined) return;
  const query = ask.query ?? { count: 1, durationHours: 24 };
  const listed = await client.blockOfferings({ query, ...(spec.clouds ? { clouds: spec.clouds } : {}) });
  const offering = listed.offerings.find((o) => o.offeringId === ask.offeringId);
  const problem = offering && upfrontProblem(offering.upfrontPrice, spec.budgetUsd);
  if (!offering || !problem) return;
  const again = `provision offers --capacity-block --duration ${query.durationHours}h${query.count !== 1 ? ` --count ${query.count}` : ''}`;
  throw new InputError(
    '--budget',
    problem,
    `raise --budget to at least ${offering.upfrontPrice} (the upfront price; nothing else is billed for the block), or pick a cheaper block from: ${again}`,
  );
}
