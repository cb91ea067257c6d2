/** The PRICED column of `provision offers`: source and age for live prices, source and date for table prices. */
import { describe, expect, it } from 'vitest';
import { age, priceOrigin } from '../../../src/client/commands/offers-price';

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
