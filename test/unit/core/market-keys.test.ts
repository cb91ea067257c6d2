/** Offer and capacity-memory keys carry the market: spot and on-demand never block or demote each other; on-demand keys are the ones recorded before markets. */
import { describe, expect, it } from 'vitest';
import { capacityEntryOf, capacityKey, capacityOfferOf, demoteRemembered, type CapacityEntry } from '../../../src/core/capacity-memory';
import { marketOf, offerKey } from '../../../src/core/offers';
import type { Offer } from '../../../src/core/provider';
import { blockFor, isBlocked } from '../../../src/core/search';

const onDemand: Offer = { cloud: 'aws', region: 'us-east-1', zone: 'us-east-1a', instanceType: 'g5.xlarge' };
const spot: Offer = { ...onDemand, market: 'spot' };

describe('market in the keys', () => {
  it('on-demand keys are byte-identical to those before markets (absent, explicit, or spot: false)', () => {
    for (const o of [onDemand, { ...onDemand, market: 'on-demand' as const }, { ...onDemand, spot: false }]) {
      expect(offerKey(o)).toBe('aws/us-east-1/us-east-1a/g5.xlarge');
      expect(capacityKey(o)).toBe('aws/us-east-1/g5.xlarge');
    }
    expect(offerKey({ cloud: 'local', region: 'local-a', instanceType: 'cpu-1' })).toBe('local/local-a/-/cpu-1');
  });

  it('spot and reserved keys differ from on-demand and from each other', () => {
    const reserved: Offer = { ...onDemand, market: 'reserved' };
    expect(offerKey(spot)).toBe('aws/us-east-1/us-east-1a/g5.xlarge/spot');
    expect(capacityKey(spot)).toBe('aws/us-east-1/g5.xlarge/spot');
    expect(new Set([onDemand, spot, reserved].map(offerKey)).size).toBe(3);
    expect(new Set([onDemand, spot, reserved].map(capacityKey)).size).toBe(3);
    expect(marketOf({ spot: true })).toBe('spot');
  });

  it('a spot Capacity entry does not demote the on-demand offer (and demotes the spot one)', () => {
    const e: CapacityEntry = capacityEntryOf(spot, 0, 60_000);
    expect(e).toEqual({ cloud: 'aws', region: 'us-east-1', instanceType: 'g5.xlarge', market: 'spot', seenAtMs: 0, untilMs: 60_000 });
    const { offers, demoted } = demoteRemembered([spot, onDemand], [e], 1_000);
    expect(offers).toEqual([onDemand, spot]);
    expect(demoted.map((d) => d.key)).toEqual(['aws/us-east-1/g5.xlarge/spot']);
    expect(demoteRemembered([onDemand], [e], 1_000).demoted).toEqual([]);
  });

  it('an on-demand entry has no market field (as recorded before markets)', () => {
    expect(capacityEntryOf(onDemand, 5, 10)).toEqual({ cloud: 'aws', region: 'us-east-1', instanceType: 'g5.xlarge', seenAtMs: 5, untilMs: 15 });
    expect(capacityOfferOf({ ...onDemand, market: 'on-demand' })).toEqual({ cloud: 'aws', region: 'us-east-1', instanceType: 'g5.xlarge' });
  });

  it('an offer-scope block of a spot offer leaves the on-demand offer open', () => {
    const b = blockFor(spot, 'offer', 'Capacity');
    expect(isBlocked(spot, [b])).toBe(true);
    expect(isBlocked(onDemand, [b])).toBe(false);
  });
});
