/** GCP's quota pre-check against the Compute fixture's `regions.get` quotas. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuotaShortfall } from '../../src/core/provider';
import { gpuQuotaMetric } from '../../src/providers/gcp/map';
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
