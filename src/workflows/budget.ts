/**
 * `--budget`: the Ready wait's budget points. Deterministic: spend and its projection come from
 * workflow time and the recorded attempts (src/core/spend.ts). Only a spec with `budgetUsd`
 * gets a timer of its own, so histories without one replay unchanged (no patch needed).
 */
import { budgetPlan } from '../core/spend';
import type { VmContext } from './context';
import { vmLog } from './telemetry';

/** Epoch ms of the next budget point to wake for (80 % warning, then 100 %), or undefined. */
export function nextBudgetWake(ctx: VmContext): number | undefined {
  const s = ctx.status;
  const usd = s.spec.budgetUsd;
  if (usd === undefined || s.budget?.reachedAt) return undefined;
  const plan = budgetPlan(s, usd, Date.now());
  return s.budget?.warnedAt ? plan.endAtMs : (plan.warnAtMs ?? plan.endAtMs);
}

/**
 * Record the budget points passed by now: the 80 % warning (a log line, the status and the Web UI
 * details) and 100 %. True when the budget is used up (the VM must be torn down).
 */
export function checkBudget(ctx: VmContext): boolean {
  const s = ctx.status;
  const usd = s.spec.budgetUsd;
  if (usd === undefined) return false;
  const now = Date.now();
  const plan = budgetPlan(s, usd, now);
  const budget = { ...(s.budget ?? { usd }) };
  if (!budget.warnedAt && plan.warnAtMs !== undefined && plan.warnAtMs <= now) {
    budget.warnedAt = new Date(now).toISOString();
    vmLog(s, 'warn', `spend so far reached 80 % of the budget of $${usd}`, { budgetUsd: usd });
  }
  if (!budget.reachedAt && plan.endAtMs !== undefined && plan.endAtMs <= now) {
    budget.reachedAt = new Date(now).toISOString();
    vmLog(s, 'warn', `spend so far reached the budget of $${usd}: tearing the VM down`, { budgetUsd: usd });
  }
  if (budget.warnedAt !== s.budget?.warnedAt || budget.reachedAt !== s.budget?.reachedAt || !s.budget) ctx.setStage(s.stage, { budget });
  return budget.reachedAt !== undefined;
}
