import { describe, expect, it } from 'vitest';
import { CLOUD_NAMES, cloudsWhere } from '../../../src/core/clouds';
import { marketProblem, marketsOf, spotClouds, spotFirst } from '../../../src/core/markets';
import type { Market, Offer } from '../../../src/core/provider';

const offer = (instanceType: string, pricePerHour: number, market?: Market): Offer => ({
  cloud: 'c',
  region: 'r',
  instanceType,
  pricePerHour,
  ...(market ? { market } : {}),
});
const SPOT_AND_ON_DEMAND = ['on-demand', 'spot'] as const;

describe('markets: what --spot asks of a cloud', () => {
  it('capabilities without markets sell on-demand only; spot clouds come from the table', () => {
    expect(marketsOf({})).toEqual(['on-demand']);
    expect(marketsOf({ markets: SPOT_AND_ON_DEMAND })).toEqual(['on-demand', 'spot']);
    expect(spotClouds()).toEqual(cloudsWhere((f) => f.markets.includes('spot')));
    expect(CLOUD_NAMES).toEqual(expect.arrayContaining(spotClouds()));
  });

  it.each<[string, Parameters<typeof marketProblem>[2], readonly Market[] | undefined, boolean]>([
    ['no --spot, on-demand cloud', undefined, undefined, false],
    ['only, on-demand cloud', 'only', ['on-demand'], true],
    ['only, capabilities that do not say', 'only', undefined, true],
    ['only, spot cloud', 'only', SPOT_AND_ON_DEMAND, false],
    ['auto, on-demand cloud (plans on-demand)', 'auto', ['on-demand'], false],
    ['auto, spot cloud', 'auto', SPOT_AND_ON_DEMAND, false],
  ])('%s', (_name, spot, markets, refused) => {
    const p = marketProblem('local', markets ? { markets } : {}, spot);
    expect(p !== undefined).toBe(refused);
    if (p) {
      expect(p.message).toBe('local sells no spot (on-demand only)');
      expect(p.fix).toMatch(/--spot auto/);
      const sellers = spotClouds();
      expect(p.fix).toContain(sellers.length ? sellers[0]! : 'no cloud of this build sells spot yet');
    }
  });
});

describe('spotFirst: the plan order under --spot auto', () => {
  const od1 = offer('a', 1);
  const sp3 = offer('b', 3, 'spot');
  const od2 = offer('c', 2, 'on-demand');
  const sp0 = offer('d', 0.5, 'spot');
  const legacy: Offer = { ...offer('e', 0.4), spot: true };

  it('auto: every spot offer before every on-demand one, each market in its given order', () => {
    expect(spotFirst([od1, sp3, od2, sp0, legacy], 'auto')).toEqual([sp3, sp0, legacy, od1, od2]);
  });

  it('only and absent: the order as given (the matcher already kept one market)', () => {
    expect(spotFirst([od1, sp3, od2], 'only')).toEqual([od1, sp3, od2]);
    expect(spotFirst([od1, sp3, od2], undefined)).toEqual([od1, sp3, od2]);
  });

  it('the capacity memory demotion stays within each market: a demoted spot offer still precedes on-demand', () => {
    // demoteRemembered moved sp0 to the end; spotFirst keeps it after sp3, before every on-demand offer.
    expect(spotFirst([od1, sp3, od2, sp0], 'auto')).toEqual([sp3, sp0, od1, od2]);
  });
});
