/**
 * The plan's quota pre-check: offers whose region's quota cannot fit one instance are dropped
 * before any attempt (`CloudProvider.quotaShortfalls`), and noted with why for the plan's story.
 * A check that fails is not fatal: the plan keeps the offers and a doomed attempt finds out.
 */
import type { CloudProvider, Offer, QuotaShortfall } from '../core/provider';
import { activityLog } from './activity-log';

export async function withinQuota(p: CloudProvider, offers: Offer[], noted: (QuotaShortfall & { cloud: string })[]): Promise<Offer[]> {
  if (!p.quotaShortfalls || offers.length === 0) return offers;
  let short: QuotaShortfall[];
  try {
    short = await p.quotaShortfalls(offers);
  } catch (err) {
    activityLog('info', `${p.name}: quotas not read, planning without them`, { cloud: p.name, error: err instanceof Error ? err.message : String(err) });
    return offers;
  }
  const why = new Map(short.map((s) => [`${s.region}/${s.instanceType}`, s]));
  const kept = offers.filter((o) => !why.has(`${o.region}/${o.instanceType}`));
  for (const s of short) {
    noted.push({ cloud: p.name, ...s });
    activityLog('info', `${p.name}: ${s.instanceType} in ${s.region} skipped: ${s.message}`, { cloud: p.name, region: s.region });
  }
  return kept;
}
