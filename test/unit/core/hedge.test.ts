import { describe, expect, it } from 'vitest';
import { laneOf, offersToStart, parallelOf, roundExhausted, settle, type InFlight } from '../../../src/core/hedge';
import { blockFor, newSearch } from '../../../src/core/search';
import type { Offer } from '../../../src/core/provider';

const offer = (cloud: string, region: string, instanceType = 'gpu-1'): Offer => ({ cloud, region, instanceType, pricePerHour: 1, currency: 'USD' });
const plan = [offer('fake', 'a'), offer('fake', 'a', 'gpu-2'), offer('fake', 'b'), offer('fake', 'c'), offer('gcp', 'us-east1'), offer('gcp', 'europe-west4')];
const flying = (...idx: number[]): InFlight[] => idx.map((i) => ({ offerIndex: i, offer: plan[i]! }));

describe('hedge: which offers start', () => {
  it('takes up to N offers in plan order, one per lane', () => {
    const s = newSearch(plan);
    expect(offersToStart(s, new Set(), [], 3).map((o) => o.index)).toEqual([0, 2, 3]);
    expect(offersToStart(s, new Set(), [], 1).map((o) => o.index)).toEqual([0]);
  });
  it('fills only free slots, skipping taken offers and lanes in flight', () => {
    const s = newSearch(plan);
    expect(offersToStart(s, new Set([0, 2]), flying(0), 3).map((o) => o.index)).toEqual([3, 4]);
    expect(offersToStart(s, new Set([0, 2, 3]), flying(0, 2, 3), 3)).toEqual([]);
  });
  it('an offer whose lane is busy waits for it; a blocked offer is skipped', () => {
    const s = { ...newSearch(plan), blocked: [blockFor(plan[2]!, 'region', 'Quota')] };
    expect(offersToStart(s, new Set([0]), flying(0), 2).map((o) => o.index)).toEqual([3]);
    expect(offersToStart(s, new Set([0, 3]), [], 4).map((o) => o.index)).toEqual([1, 4]);
  });
  it('lanes: regional clouds by region, the others (global side resources) by cloud', () => {
    expect(laneOf(offer('aws', 'us-east-1'))).toBe('aws/us-east-1');
    expect(laneOf(offer('local', 'local-b'))).toBe('local/local-b');
    expect(laneOf(offer('gcp', 'us-east1'))).toBe('gcp');
    expect(laneOf(offer('digitalocean', 'nyc2'))).toBe('digitalocean');
    const s = newSearch(plan);
    expect(offersToStart(s, new Set([0, 1, 2, 3]), [], 8).map((o) => o.index)).toEqual([4]);
  });
  it('a round is exhausted when every offer was taken or is blocked', () => {
    const s = { ...newSearch(plan), blocked: [blockFor(plan[4]!, 'cloud', 'Credentials')] };
    expect(roundExhausted(s, new Set([0, 1, 2]))).toBe(false);
    expect(roundExhausted(s, new Set([0, 1, 2, 3]))).toBe(true);
  });
});

describe('hedge: what an end means', () => {
  it.each([
    [{ ok: true, cancelled: false }, false, 'win'],
    [{ ok: true, cancelled: false }, true, 'lose'],
    [{ ok: false, cancelled: true, next: 'abort' as const }, false, 'stop'],
    [{ ok: false, cancelled: false, next: 'abort' as const }, false, 'abort'],
    [{ ok: false, cancelled: false, next: 'continue' as const }, false, 'refill'],
  ])('%o with a winner=%s → %s', (end, haveWinner, row) => {
    expect(settle(end, haveWinner)).toBe(row);
  });
  it('parallel defaults to 1 and is clamped to 1..8', () => {
    expect([undefined, 0, 1, 3, 8, 20, 2.7].map(parallelOf)).toEqual([1, 1, 1, 3, 8, 8, 2]);
  });
});
