import { describe, expect, it } from 'vitest';
import { parseShape } from '../../../../src/client/fleet-schema';
import { checkRevision, expandShape } from '../../../../src/core/fleet/types';
import { shape } from './fixtures';

const good = {
  name: 'train',
  generation: 1,
  groups: [
    { id: 'head', role: 'head', count: 1, vm: { clouds: ['local'] } },
    { id: 'work', role: 'worker', count: 2, vm: {}, bootstrap: { verify: ['true'], start: 'sleep 1000', ready: { tcp: {} }, portBase: 9000, timeout: 30 } },
  ],
};

describe('fleet shape', () => {
  it('parses and expands to <fleet>-<group>-<index>', () => {
    expect([...expandShape(parseShape(good)).keys()]).toEqual(['train-head-0', 'train-work-0', 'train-work-1']);
  });
  it.each([
    ['duplicate group ids', { ...good, groups: [good.groups[0], good.groups[0]] }, 'duplicate group id'],
    ['a negative count', { ...good, groups: [{ ...good.groups[0], count: -1 }] }, 'count'],
    ['a non-finite price', { ...good, groups: [{ ...good.groups[0], vm: { maxPricePerHour: Infinity } }] }, 'maxPricePerHour'],
    ['a negative timeout', { ...good, groups: [{ ...good.groups[1], bootstrap: { ...good.groups[1]!.bootstrap, timeout: -5 } }] }, 'timeout'],
    ['a bad fleet name', { ...good, name: 'Bad_Name' }, 'name'],
    ['a group id with a dash', { ...good, groups: [{ ...good.groups[0], id: 'a-b' }] }, 'id'],
    ['an unknown field', { ...good, extra: 1 }, 'extra'],
    [
      'a capacity block bought per slot',
      { ...good, groups: [{ ...good.groups[0], vm: { reserved: { kind: 'capacity-block', offeringId: 'cb-1', query: { count: 1, durationHours: 24 } } } }] },
      'cannot buy a capacity block in a fleet',
    ],
    ['a tcp check without a port', { ...good, groups: [{ ...good.groups[1], bootstrap: { start: 'x', ready: { tcp: {} }, timeout: 5 } }] }, 'port'],
  ])('rejects %s', (_what, input, mention) => {
    expect(() => parseShape(input)).toThrow(mention);
  });
});

describe('revision contract', () => {
  const g1 = shape(1, { web: 2 });
  it('accepts a higher generation, and the same generation with the same content (idempotent)', () => {
    expect(checkRevision(g1, shape(2, { web: 3 }))).toEqual({ ok: true, changed: true });
    expect(checkRevision(g1, JSON.parse(JSON.stringify(g1)))).toEqual({ ok: true, changed: false });
  });
  it('rejects a regression and a silent change', () => {
    expect(checkRevision(shape(3, { web: 2 }), shape(2, { web: 2 }))).toMatchObject({ ok: false, reason: expect.stringContaining('regressed') });
    expect(checkRevision(g1, shape(1, { web: 3 }))).toMatchObject({ ok: false, reason: expect.stringContaining('without a new generation') });
    expect(checkRevision(g1, shape(2, { web: 2 }, 'v1', 'other'))).toMatchObject({ ok: false });
  });
});
