/** GCP's quota pre-check against the Compute fixture's `regions.get` quotas. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer, QuotaShortfall } from '../../src/core/provider';
import type { GcpQuota } from '../../src/providers/gcp/api';
import { classifyOperation, forMarket } from '../../src/providers/gcp/errors';
import { gpuQuotaMetric, quotaShortfallsOf } from '../../src/providers/gcp/map';
import { GCP_REQUEST, startGcpDouble, type GcpDouble } from './gcp/double';
import { planned } from './planned';

describe('gcp quota pre-check', () => {
  let d: GcpDouble;
  beforeAll(async () => {
    d = await startGcpDouble({ regions: ['us-central1', 'us-east1'] });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('names the offers whose region cannot fit them: a zero quota, and a quota in use', async () => {
    const offers = await planned(d.provider, GCP_REQUEST);
    expect(await d.provider.quotaShortfalls!(offers)).toEqual([]);
    d.server.setQuota('us-east1', 'NVIDIA_T4_GPUS', 0);
    // GCP reads every quota or throws: never a QuotaUnknown.
    const short = (await d.provider.quotaShortfalls!(offers)) as QuotaShortfall[];
    expect(short.map((s) => `${s.region}/${s.instanceType}`)).toEqual(['us-east1/n1-standard-4']);
    expect(short[0]!.message).toBe('quota NVIDIA_T4_GPUS in us-east1: 0 of 0 free, n1-standard-4 needs 1');
    d.server.setQuota('us-central1', 'NVIDIA_T4_GPUS', 4, 4);
    expect((await d.provider.quotaShortfalls!(offers)).map((s) => s.region)).toEqual(['us-central1', 'us-east1']);
    d.server.setQuota('us-central1', 'NVIDIA_T4_GPUS', 4, 3);
    expect((await d.provider.quotaShortfalls!(offers)).map((s) => s.region)).toEqual(['us-east1']);
  });

  it('maps GPU models to quota metrics (spot: the PREEMPTIBLE_ twin)', () => {
    expect(gpuQuotaMetric('H100')).toBe('NVIDIA_H100_GPUS');
    expect(gpuQuotaMetric('a100-80gb')).toBe('NVIDIA_A100_80GB_GPUS');
    expect(gpuQuotaMetric('T4', true)).toBe('PREEMPTIBLE_NVIDIA_T4_GPUS');
    expect(gpuQuotaMetric('B200')).toBeUndefined();
  });
});

describe('gcp quota pre-check with spot offers', () => {
  const t4 = (market?: 'spot'): Offer => ({
    cloud: 'gcp',
    region: 'us-central1',
    zone: 'us-central1-a',
    instanceType: 'n1-standard-4',
    gpu: { model: 'T4', count: 1 },
    ...(market ? { market } : {}),
  });
  const quotas = (od: number, spot: number): Map<string, GcpQuota[]> =>
    new Map([
      [
        'us-central1',
        [
          { metric: 'NVIDIA_T4_GPUS', limit: od, usage: 0 },
          { metric: 'PREEMPTIBLE_NVIDIA_T4_GPUS', limit: spot, usage: 0 },
        ],
      ],
    ]);

  it('judges spot offers by the PREEMPTIBLE_ quota, and drops a type only when every market planned there is short', () => {
    expect(quotaShortfallsOf([t4('spot')], quotas(8, 0)).map((s) => s.message)).toEqual([
      'quota PREEMPTIBLE_NVIDIA_T4_GPUS in us-central1: 0 of 0 free, n1-standard-4 needs 1',
    ]);
    expect(quotaShortfallsOf([t4('spot')], quotas(0, 8))).toEqual([]);
    // --spot auto: the on-demand twin fits, so nothing is dropped (the spot create's refusal is offer-scoped).
    expect(quotaShortfallsOf([t4('spot'), t4()], quotas(8, 0))).toEqual([]);
    expect(quotaShortfallsOf([t4('spot'), t4()], quotas(0, 0))).toHaveLength(1);
    expect(quotaShortfallsOf([t4()], quotas(0, 8))).toHaveLength(1);
  });

  it("a create's PREEMPTIBLE_ quota refusal on a spot offer blocks only that offer; other quota refusals keep their scope", () => {
    const spotQuota = classifyOperation([
      { code: 'QUOTA_EXCEEDED', message: "Quota 'PREEMPTIBLE_NVIDIA_T4_GPUS' exceeded.  Limit: 0.0 in region us-central1." },
    ]);
    expect(forMarket(spotQuota, 'spot')).toMatchObject({ kind: 'Quota', block: 'offer', code: 'QUOTA_EXCEEDED' });
    expect(forMarket(spotQuota, undefined)).toBe(spotQuota);
    const odQuota = classifyOperation([{ code: 'QUOTA_EXCEEDED', message: "Quota 'NVIDIA_T4_GPUS' exceeded.  Limit: 0.0 in region us-central1." }]);
    expect(forMarket(odQuota, 'spot')).toMatchObject({ kind: 'Quota', block: 'region' });
  });
});
