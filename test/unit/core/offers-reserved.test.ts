/** Offer keys of reserved and queued offers (src/core/offers.ts). */
import { describe, expect, it } from 'vitest';
import { offerKey } from '../../../src/core/offers';
import { capacityKey } from '../../../src/core/capacity-memory';

const base = { cloud: 'aws', region: 'us-east-1', zone: 'us-east-1a', instanceType: 'p5.48xlarge' };
const reservation = (id: string) => ({ id, kind: 'capacity-reservation' as const, total: 2, free: 0 });

describe('reserved and queued offer keys', () => {
  it('two reservations of one type in one zone are two offers (a full one never blocks the other)', () => {
    const a = offerKey({ ...base, market: 'reserved', reservation: reservation('cr-a') });
    const b = offerKey({ ...base, market: 'reserved', reservation: reservation('cr-b') });
    expect(a).toBe('aws/us-east-1/us-east-1a/p5.48xlarge/reserved:cr-a');
    expect(a).not.toBe(b);
    expect(capacityKey({ ...base, market: 'reserved', reservation: reservation('cr-a') })).not.toBe(
      capacityKey({ ...base, market: 'reserved', reservation: reservation('cr-b') }),
    );
  });
  it('on-demand keys are unchanged; a queued twin has its own key', () => {
    expect(offerKey(base)).toBe('aws/us-east-1/us-east-1a/p5.48xlarge');
    expect(offerKey({ ...base, queued: true })).toBe('aws/us-east-1/us-east-1a/p5.48xlarge/queued');
  });
});
