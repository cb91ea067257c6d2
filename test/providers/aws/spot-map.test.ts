/** The spot market's pure mapping (src/providers/aws/spot.ts): its reclaim table, row by row, and the spot offers. */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/core/errors';
import type { Offer } from '../../../src/core/provider';
import type { Ec2Instance } from '../../../src/providers/aws/map';
import { RECLAIM_CODES, preemptionOf, spotOffers, spotScoped } from '../../../src/providers/aws/spot';

const NOW = '2026-12-04T01:30:00.000Z';
const spotInstance = (over: Partial<Ec2Instance> = {}): Ec2Instance => ({
  InstanceId: 'i-0123456789abcdef0',
  State: { Name: 'running' },
  InstanceLifecycle: 'spot',
  SpotInstanceRequestId: 'sir-1',
  ...over,
});
const request = (code: string) => ({
  requestId: 'sir-1',
  instanceId: 'i-0123456789abcdef0',
  code,
  message: `m ${code}`,
  updatedAt: '2026-12-04T01:00:00.000Z',
});

describe('aws spot reclaim (preemptionOf)', () => {
  it('marked-for-termination and marked-for-stop: the marking time and two minutes after it', () => {
    for (const code of ['marked-for-termination', 'marked-for-stop'])
      expect(preemptionOf(spotInstance(), request(code), NOW)).toEqual({
        noticeAt: '2026-12-04T01:00:00.000Z',
        deadline: '2026-12-04T01:02:00.000Z',
        detail: `${code}: m ${code}`,
      });
  });

  it('every market termination or stop code: the status time, no deadline', () => {
    const reclaimed = Object.entries(RECLAIM_CODES).filter(([, v]) => v === 'reclaimed');
    expect(reclaimed).toHaveLength(6);
    for (const [code] of reclaimed)
      expect(preemptionOf(spotInstance({ State: { Name: 'shutting-down' } }), request(code), NOW)).toEqual({
        noticeAt: '2026-12-04T01:00:00.000Z',
        detail: `${code}: m ${code}`,
      });
  });

  it('the user or a healthy request is no preemption', () => {
    for (const code of ['fulfilled', 'instance-terminated-by-user', 'request-canceled-and-instance-running'])
      expect(preemptionOf(spotInstance(), request(code), NOW)).toBeUndefined();
    expect(preemptionOf(spotInstance(), undefined, NOW)).toBeUndefined();
  });

  it('no request status, StateReason Server.SpotInstanceTermination: first seen now', () => {
    const i = spotInstance({
      State: { Name: 'shutting-down' },
      StateReason: { Code: 'Server.SpotInstanceTermination', Message: 'Server.SpotInstanceTermination: Spot instance termination' },
    });
    expect(preemptionOf(i, undefined, NOW)).toEqual({ noticeAt: NOW, detail: 'Server.SpotInstanceTermination: Spot instance termination' });
    expect(preemptionOf({ ...i, StateReason: { Code: 'Client.UserInitiatedShutdown' } }, undefined, NOW)).toBeUndefined();
  });

  it('an on-demand instance never has one, whatever it says', () => {
    const { InstanceLifecycle: _, ...od } = spotInstance({ StateReason: { Code: 'Server.SpotInstanceTermination' } });
    expect(preemptionOf(od, request('marked-for-termination'), NOW)).toBeUndefined();
  });
});

describe('aws spot offers', () => {
  const od: Offer = {
    cloud: 'aws',
    region: 'us-east-1',
    instanceType: 'g5.xlarge',
    pricePerHour: 1.006,
    priceSource: 'catalog',
    pricedAt: '2025-06',
    spot: false,
    currency: 'USD',
  };

  it('one per AZ, the latest price per AZ, types not offered on demand left out', () => {
    const out = spotOffers(
      [od],
      [
        { zone: 'us-east-1b', instanceType: 'g5.xlarge', pricePerHour: 0.5, changedAt: '2026-12-04T00:00:00.000Z' },
        { zone: 'us-east-1b', instanceType: 'g5.xlarge', pricePerHour: 0.45, changedAt: '2026-12-04T01:00:00.000Z' },
        { zone: 'us-east-1a', instanceType: 'g5.xlarge', pricePerHour: 0.42, changedAt: '2026-12-03T01:00:00.000Z' },
        { zone: 'us-east-1a', instanceType: 'p5.48xlarge', pricePerHour: 20, changedAt: '2026-12-03T01:00:00.000Z' },
      ],
      'us-east-1',
      NOW,
    );
    expect(out.map((o) => [o.zone, o.pricePerHour, o.onDemandPricePerHour, o.market, o.spot, o.priceSource, o.pricedAt])).toEqual([
      ['us-east-1a', 0.42, 1.006, 'spot', true, 'api', NOW],
      ['us-east-1b', 0.45, 1.006, 'spot', true, 'api', NOW],
    ]);
  });

  it('spotScoped narrows Capacity and Unavailable to the offer, and leaves Quota alone', () => {
    const un = spotScoped(new ProviderError('Unavailable', 'x', { block: 'type-in-region', code: 'Unsupported' })) as ProviderError;
    expect([un.kind, un.block, un.code]).toEqual(['Unavailable', 'offer', 'Unsupported']);
    const q = new ProviderError('Quota', 'q', { block: 'region' });
    expect(spotScoped(q)).toBe(q);
  });
});
