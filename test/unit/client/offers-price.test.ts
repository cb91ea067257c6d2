/** The PRICED column of `provision offers`: source and age for live prices, source and date for table prices. */
import { describe, expect, it } from 'vitest';
import { age, offerRows, priceOrigin } from '../../../src/client/commands/offers-price';
import { offerPrice } from '../../../src/client/output';
import type { Offer } from '../../../src/core/provider';

const NOW = Date.parse('2026-12-01T12:00:00Z');

describe('priceOrigin', () => {
  it('a live price shows api and how long ago it was read', () => {
    expect(priceOrigin({ pricePerHour: 1, priceSource: 'api', pricedAt: '2026-12-01T11:57:00Z' }, NOW)).toBe('api 3m');
    expect(priceOrigin({ pricePerHour: 1, priceSource: 'api', pricedAt: '2026-12-01T11:59:58.500Z' }, NOW)).toBe('api 1s');
    expect(priceOrigin({ pricePerHour: 1, priceSource: 'api', pricedAt: '2026-11-30T13:00:00Z' }, NOW)).toBe('api 23h');
    expect(priceOrigin({ pricePerHour: 1, priceSource: 'api', pricedAt: 'garbled' }, NOW)).toBe('api');
  });

  it("a table price shows catalog and the table's date", () => {
    expect(priceOrigin({ pricePerHour: 0.526, priceSource: 'catalog', pricedAt: '2025-06' }, NOW)).toBe('catalog 2025-06');
    expect(priceOrigin({ pricePerHour: 0, priceSource: 'catalog', pricedAt: '2026-06-01' }, NOW)).toBe('catalog 2026-06-01');
  });

  it('no price, or an offer from before the fields existed, shows -', () => {
    expect(priceOrigin({}, NOW)).toBe('-');
    expect(priceOrigin({ pricePerHour: 2 }, NOW)).toBe('-');
  });

  it('ages are compact', () => {
    expect([0, 59_999, 60_000, 3_599_999, 3_600_000, 47 * 3_600_000, 48 * 3_600_000, -5].map(age)).toEqual(['0s', '59s', '1m', '59m', '1h', '47h', '2d', '0s']);
  });
});

describe('offerRows and offerPrice: the market beside the price', () => {
  const spot: Offer = {
    cloud: 'aws',
    region: 'us-east-1',
    instanceType: 'p5',
    market: 'spot',
    pricePerHour: 1.2,
    onDemandPricePerHour: 2.99,
    priceSource: 'api',
    pricedAt: '2026-12-01T11:57:00Z',
  };
  const onDemand: Offer = { cloud: 'aws', region: 'us-east-1', instanceType: 'p5', pricePerHour: 2.99, priceSource: 'catalog', pricedAt: '2025-06' };

  it('--spot: MARKET, PRICE (the price charged) and ON-DEMAND; an on-demand row repeats its price there', () => {
    expect(offerRows([spot, onDemand], NOW, 'auto')).toEqual([
      ['CLOUD', 'REGION', 'ZONE', 'TYPE', 'GPU', 'MARKET', 'PRICE', 'ON-DEMAND', 'PRICED'],
      ['aws', 'us-east-1', '-', 'p5', '-', 'spot', '$1.20/h', '$2.99/h', 'api 3m'],
      ['aws', 'us-east-1', '-', 'p5', '-', 'on-demand', '$2.99/h', '$2.99/h', 'catalog 2025-06'],
    ]);
  });

  it('without --spot: the columns as before', () => {
    expect(offerRows([onDemand], NOW, undefined)).toEqual([
      ['CLOUD', 'REGION', 'ZONE', 'TYPE', 'GPU', 'PRICE', 'PRICED'],
      ['aws', 'us-east-1', '-', 'p5', '-', '$2.99/h', 'catalog 2025-06'],
    ]);
  });

  it('status, start and explain show a spot price with the on-demand one beside it', () => {
    expect(offerPrice(spot)).toBe('spot $1.20/h (on-demand $2.99/h)');
    expect(offerPrice({ ...spot, onDemandPricePerHour: undefined })).toBe('spot $1.20/h');
    expect(offerPrice(onDemand)).toBe('$2.99/h');
    expect(offerPrice(undefined)).toBe('-');
  });
});
