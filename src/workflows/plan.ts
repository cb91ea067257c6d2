/**
 * The launch's plan step: `planOffers` for the VM's spec (the request derived whole by
 * src/core/launch-request.ts), interruptible by a cancel. The serial
 * and the hedged search call it first and again on each retry-until-up round.
 */
import type { PlanOutput } from '../activities';
import { failedLaunch, type LaunchOutcome } from '../core/attempt';
import { planRequestOf } from '../core/launch-request';
import { planAskOf } from '../core/reserved-window';
import { kindOfFailureType } from '../core/search';
import type { VmContext } from './context';
import { failureInfo } from './failure-info';
import { reading } from './proxies';

export type Plan = () => Promise<PlanOutput>;

/** The plan call of `ctx`'s launch (stage `planning` while it runs). */
export function planFor(ctx: VmContext): Plan {
  const spec = ctx.launchSpec();
  const request = planRequestOf(spec);
  // A bought capacity block: plan its reservation, on its cloud and in its region.
  const block = spec.reserved?.kind === 'capacity-block' ? ctx.status.reserved?.reservation : undefined;
  if (block) Object.assign(request, { reserved: planAskOf(spec.reserved, block.id), regions: [block.region] });
  const clouds = block ? [block.cloud] : spec.clouds;
  return async () => {
    ctx.setStage('planning');
    return ctx.interruptibly(() =>
      reading(ctx.tuning, `plan offers for ${spec.name}`).planOffers({
        request,
        requireK8s: spec.k8s === 'on',
        ...(clouds ? { clouds } : {}),
      }),
    );
  };
}

/** The first plan, or the launch's end when it fails (cancelled, or no offers). */
export async function firstPlan(ctx: VmContext, plan: Plan): Promise<{ planned: PlanOutput } | { outcome: LaunchOutcome }> {
  try {
    return { planned: await plan() };
  } catch (err) {
    const f = failureInfo(err);
    if (f.cancelled) return { outcome: { kind: 'cancelled', attempts: ctx.status.attempts } };
    return { outcome: failedLaunch('no-offers', kindOfFailureType(f.type), f.message, ctx.status.attempts) };
  }
}
