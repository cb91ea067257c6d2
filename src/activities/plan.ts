/**
 * The plan step (`planOffers`): every configured (or chosen) cloud's offers that match the
 * request (`matchOffers`), within quota, ordered by preference, with the offers that answered
 * Capacity lately moved last. Creates nothing. A cloud that cannot serve the request is skipped
 * with its reason; no offer at all fails the plan (unless it is a listing).
 */
import { demoteRemembered, type DemotedOffer } from '../core/capacity-memory';
import { ProviderError } from '../core/errors';
import { imageDiskProblem } from '../core/image-disk';
import { marketProblem, spotFirst } from '../core/markets';
import { queuedFirst } from '../core/reserved-window';
import { explainNoMatch, matchOffers, noOffersKind } from '../core/offer-match';
import type { Capabilities, CloudProvider, Offer, QuotaShortfall, ResourceRequest } from '../core/provider';
import { defaultClouds } from '../providers/default-registry';
import { activityLog } from './activity-log';
import { providerOf } from './attempt';
import { readCapacityMemory } from './capacity-memory';
import type { ActivityDeps } from './deps';
import { toFailure } from './failures';
import { withinQuota, type QuotaNotes } from './quota';

export interface PlanInput {
  /** Only clouds that can run k3s (the user asked for --k8s explicitly). */
  requireK8s?: boolean;
  clouds?: string[];
  request: ResourceRequest;
  /** A listing (`provision offers`): a cloud that fails is skipped with its reason, and no offer is not an error. */
  listOnly?: boolean;
}

export interface PlanOutput {
  offers: Offer[];
  /** Capabilities of every cloud that produced offers (drives polling and k3s policy). */
  capabilities: Record<string, Capabilities>;
  /** Clouds that could not plan, and why (shown to the user, not fatal while another cloud plans). */
  skipped: { cloud: string; kind: string; message: string }[];
  /** Offers the deployment's capacity memory moved to the end of the plan, and why (absent in older histories). */
  demoted?: DemotedOffer[];
  /** Offers dropped because their region's quota cannot fit them (`quotaShortfalls`), and why (absent in older histories). */
  quotaSkipped?: (QuotaShortfall & { cloud: string })[];
  /** Quotas the pre-check could not read, whose offers were kept (absent in older histories). */
  quotaUnchecked?: QuotaNotes['unchecked'];
}

/** Offers across clouds: user's cloud order when given, else all offers by price (unknown price last). */
function orderOffers(perCloud: Offer[][], userOrdered: boolean): Offer[] {
  const all = perCloud.flat();
  if (userOrdered) return all;
  return all
    .map((o, i) => ({ o, i }))
    .sort((a, b) => (a.o.pricePerHour ?? Infinity) - (b.o.pricePerHour ?? Infinity) || a.i - b.i)
    .map((x) => x.o);
}

/** What the clouds planned so far. */
interface Planned {
  perCloud: Offer[][];
  capabilities: Record<string, Capabilities>;
  skipped: PlanOutput['skipped'];
  quota: QuotaNotes;
}

/** Why `p` cannot take part in this plan at all (k3s, market or image/disk rules), or undefined. */
function unfitReason(cloud: string, p: CloudProvider, input: PlanInput): string | undefined {
  if (input.requireK8s && !p.capabilities().k8s) return `${cloud} cannot run k3s (use --no-k8s, or another cloud)`;
  const market = marketProblem(cloud, p.capabilities(), input.request.spot);
  if (market) {
    activityLog('info', `${cloud} sells no spot: skipped`, { cloud, flag: '--spot' });
    return `${market.message} (${market.fix})`;
  }
  const unfit = imageDiskProblem(cloud, p.capabilities(), input.request);
  if (!unfit) return undefined;
  activityLog('info', `${cloud} cannot honour ${unfit.flag}: skipped`, { cloud, flag: unfit.flag });
  return `${unfit.message} (${unfit.fix})`;
}

/** One cloud's part of the plan, into `out`. Throws (retryable) only on a transient error of a real plan. */
async function planCloud(p: CloudProvider, cloud: string, input: PlanInput, out: Planned): Promise<void> {
  const unfit = unfitReason(cloud, p, input);
  if (unfit) {
    out.skipped.push({ cloud, kind: 'InvalidRequest', message: unfit });
    return;
  }
  try {
    const listed = await p.plan(input.request);
    // The one filter for every cloud: adapters list, the matcher judges.
    const matched = matchOffers(listed, input.request);
    const offers = input.listOnly ? matched.offers : await withinQuota(p, matched.offers, out.quota);
    if (offers.length > 0) out.capabilities[cloud] = p.capabilities();
    else if (matched.offers.length > 0) {
      const message = out.quota.skipped
        .filter((q) => q.cloud === cloud)
        .map((q) => q.message)
        .join('; ');
      out.skipped.push({ cloud, kind: 'Quota', message });
    } else if (matched.dropped.length > 0) out.skipped.push({ cloud, kind: 'InvalidRequest', message: explainNoMatch(input.request, matched.dropped) });
    out.perCloud.push(offers);
  } catch (err) {
    // A cloud that cannot plan this request is skipped; a transient error is retried.
    if (err instanceof ProviderError && (err.kind !== 'Transient' || input.listOnly)) {
      out.skipped.push({ cloud, kind: err.kind, message: err.message });
      activityLog('info', `${cloud} cannot plan this request: skipped`, { cloud, kind: err.kind, error: err.message });
    } else throw toFailure(err);
  }
}

export function createPlanActivities(deps: ActivityDeps) {
  const now = deps.now ?? Date.now;
  const memoryWindow = deps.capacityMemoryMs !== undefined ? { capacityMemoryMs: deps.capacityMemoryMs } : {};
  return {
    /** Every configured (or chosen) cloud's offers that match the request (`matchOffers`), ordered by preference. Creates nothing. */
    async planOffers(input: PlanInput): Promise<PlanOutput> {
      const clouds = input.clouds?.length ? input.clouds : defaultClouds(deps.registry);
      const out: Planned = { perCloud: [], capabilities: {}, skipped: [], quota: { skipped: [], unchecked: [] } };
      for (const cloud of clouds) await planCloud(providerOf(deps.registry, cloud), cloud, input, out);
      const ordered = orderOffers(out.perCloud, Boolean(input.clouds?.length));
      // Offers that answered Capacity lately go last (src/core/capacity-memory.ts says why not skipped).
      const memory = input.listOnly ? [] : await readCapacityMemory(memoryWindow);
      const remembered = demoteRemembered(ordered, memory, now());
      // Under --spot auto, spot before on-demand, each market in its order: the demotion applies within each market.
      const offers = queuedFirst(spotFirst(remembered.offers, input.request.spot), input.request.reserved);
      const { demoted } = remembered;
      const { capabilities, skipped, quota } = out;
      if (offers.length === 0 && !input.listOnly) {
        const why = skipped.map((s) => `${s.cloud}: ${s.message}`).join('; ');
        throw toFailure(new ProviderError(noOffersKind(skipped), `no cloud can serve this request${why ? ` (${why})` : ''}`));
      }
      const tail = demoted.length > 0 ? `; ${demoted.length} tried last, out of capacity lately: ${demoted.map((d) => d.key).join(', ')}` : '';
      activityLog('info', `planned ${offers.length} offer(s)${tail}`, { offers: offers.length, clouds: Object.keys(capabilities), demoted: demoted.length });
      return {
        offers,
        capabilities,
        skipped,
        ...(demoted.length > 0 ? { demoted } : {}),
        ...(quota.skipped.length > 0 ? { quotaSkipped: quota.skipped } : {}),
        ...(quota.unchecked.length > 0 ? { quotaUnchecked: quota.unchecked } : {}),
      };
    },
  };
}
