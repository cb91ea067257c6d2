/**
 * The plan's quota pre-check: offers whose region's quota cannot fit one instance are dropped
 * before any attempt (`CloudProvider.quotaShortfalls`), and noted with why for the plan's story.
 * A check that fails is not fatal: the plan keeps the offers, notes that their quota was not
 * checked, and a doomed attempt finds out.
 */
import type { CloudProvider, Offer, QuotaShortfall, QuotaUnknown } from '../core/provider';
import { activityLog } from './activity-log';

/** What the plan notes about quotas: offers dropped, and quotas not read (region absent: none read). */
export interface QuotaNotes {
  skipped: (QuotaShortfall & { cloud: string })[];
  unchecked: { cloud: string; region?: string; message: string }[];
}

export async function withinQuota(p: CloudProvider, offers: Offer[], noted: QuotaNotes): Promise<Offer[]> {
  if (!p.quotaShortfalls || offers.length === 0) return offers;
  let found: (QuotaShortfall | QuotaUnknown)[];
  try {
    found = await p.quotaShortfalls(offers);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    noted.unchecked.push({ cloud: p.name, message: `quotas not read, not checked: ${error}` });
    activityLog('info', `${p.name}: quotas not read, planning without them`, { cloud: p.name, error });
    return offers;
  }
  const short: QuotaShortfall[] = [];
  for (const f of found) {
    if ('unknown' in f) {
      noted.unchecked.push({ cloud: p.name, region: f.region, message: f.message });
      activityLog('info', `${p.name}: ${f.message}`, { cloud: p.name, region: f.region });
    } else short.push(f);
  }
  const why = new Map(short.map((s) => [`${s.region}/${s.instanceType}`, s]));
  const kept = offers.filter((o) => !why.has(`${o.region}/${o.instanceType}`));
  for (const s of short) {
    noted.skipped.push({ cloud: p.name, ...s });
    activityLog('info', `${p.name}: ${s.instanceType} in ${s.region} skipped: ${s.message}`, { cloud: p.name, region: s.region });
  }
  return kept;
}
