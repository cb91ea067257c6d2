import { describe, expect, it } from 'vitest';
import { indexedStage, indexKey } from '../../../src/core/search-attributes';

describe('what the search attributes index', () => {
  it("an attempt's sub-stages are indexed as creating; every other stage as itself", () => {
    expect(indexedStage('booting')).toBe('creating');
    expect(indexedStage('connecting')).toBe('creating');
    for (const s of ['planning', 'creating', 'ready', 'lost', 'tearing-down', 'failed'] as const) expect(indexedStage(s)).toBe(s);
  });

  it('equal values, equal keys (no upsert); any field changed, another key', () => {
    const a = { vmName: 'gpu1', stage: 'planning' };
    expect(indexKey(a)).toBe(indexKey({ stage: 'planning', vmName: 'gpu1' }));
    expect(indexKey(a)).not.toBe(indexKey({ ...a, stage: 'creating' }));
    expect(indexKey(a)).not.toBe(indexKey({ ...a, cloud: 'aws' }));
  });
});
