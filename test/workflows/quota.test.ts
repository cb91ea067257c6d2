/** The plan's quota pre-check on the dev server: a region whose quota cannot fit the request is skipped without an attempt. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer, QuotaShortfall } from '../../src/core/provider';
import { FakeProvider } from '../harness/fake-provider';
import { requireServer } from '../harness/temporal';
import { startLab, waitStage, type Lab } from './helpers';

/** A fake cloud that publishes quotas: fake-a has none left. */
class QuotaFake extends FakeProvider {
  async quotaShortfalls(offers: readonly Offer[]): Promise<QuotaShortfall[]> {
    return offers
      .filter((o) => o.region === 'fake-a')
      .map((o) => ({ region: o.region, instanceType: o.instanceType, message: `quota FAKE_GPUS in fake-a: 0 of 0 free, ${o.instanceType} needs 1` }));
  }
}

describe.skipIf(!requireServer())('quota pre-check (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ fake: new QuotaFake() });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('skips the zero-quota region without an attempt and says why in the plan', async () => {
    const h = await lab.start({ name: 'quota-pre', k8s: 'off' });
    const s = await waitStage(h, 'ready');
    expect(s.attempts.map((a) => `${a.offer.region}/${a.offer.instanceType}:${a.outcome}`)).toEqual(['fake-b/gpu-1:ready']);
    expect(lab.fake.calls.filter((c) => c.vmName === 'quota-pre' && c.region === 'fake-a')).toEqual([]);
    const history = await h.fetchHistory();
    const data = history.events?.find((e) => e.activityTaskCompletedEventAttributes)?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    const plan = JSON.parse(Buffer.from(data ?? new Uint8Array()).toString()) as { offers: Offer[]; quotaSkipped?: (QuotaShortfall & { cloud: string })[] };
    expect(plan.offers.map((o) => o.region)).toEqual(['fake-b', 'fake-b']);
    expect(plan.quotaSkipped?.map((q) => `${q.cloud}/${q.region}/${q.instanceType}`)).toEqual(['fake/fake-a/gpu-1', 'fake/fake-a/gpu-2']);
    await h.signal('teardown');
    await h.result();
  });
});
