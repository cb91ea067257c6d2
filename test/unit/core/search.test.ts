import { describe, expect, it } from 'vitest';
import type { Offer } from '../../../src/core/provider';
import type { AttemptRecord } from '../../../src/core/api';
import {
  afterFailure,
  attemptsTable,
  blockFor,
  decide,
  exhaustedKind,
  isBlocked,
  kindOfFailureType,
  newSearch,
  nextOffer,
  replan,
} from '../../../src/core/search';

const o = (region: string, instanceType: string, zone?: string, cloud = 'c'): Offer => ({ cloud, region, instanceType, ...(zone ? { zone } : {}) });
const offers = [o('r1', 't1', 'z1'), o('r1', 't2', 'z1'), o('r1', 't1', 'z2'), o('r2', 't1'), o('r2', 't2'), o('r3', 't1', undefined, 'other')];
const attempt = (index: number, offer: Offer): AttemptRecord => ({
  index,
  offer,
  outcome: 'failed',
  instanceIds: [],
  compensated: false,
  startedAt: '',
  endedAt: '',
});

describe('decide: the error-kind table', () => {
  it.each([
    // kind, phase, compensate, next, block
    ['Capacity', 'create', 'full', 'continue', 'offer'],
    ['Capacity', 'boot', 'full', 'continue', 'offer'],
    ['Quota', 'create', 'full', 'continue', 'region'],
    ['Failed', 'boot', 'full', 'continue', 'offer'],
    ['Failed', 'connect', 'full', 'continue', 'offer'],
    ['Transient', 'create', 'full', 'continue', 'offer'],
    ['Unavailable', 'prepare', 'cleanup', 'continue', 'offer'],
    ['Unavailable', 'create', 'cleanup', 'continue', 'offer'],
    ['Capacity', 'prepare', 'cleanup', 'continue', 'offer'],
    ['InvalidRequest', 'prepare', 'cleanup', 'abort', undefined],
    ['InvalidRequest', 'create', 'full', 'abort', undefined],
    ['Credentials', 'boot', 'full', 'abort', undefined],
    ['Credentials', 'prepare', 'cleanup', 'abort', undefined],
  ] as const)('%s at %s → compensate %s, %s, block %s', (kind, phase, compensate, next, block) => {
    const d = decide(kind, phase);
    expect(d.compensate).toBe(compensate);
    expect(d.next).toBe(next);
    expect(d.block).toBe(block);
  });

  it('an adapter-supplied scope overrides the default', () => {
    expect(decide('Capacity', 'create', 'zone').block).toBe('zone');
    expect(decide('Unavailable', 'create', 'type-in-region').block).toBe('type-in-region');
    expect(decide('Quota', 'create', 'cloud').block).toBe('cloud');
  });

  it('fatal kinds abort even with an adapter scope', () => {
    expect(decide('Credentials', 'create', 'cloud').next).toBe('abort');
  });

  it('maps non-provider failure types onto kinds', () => {
    expect(kindOfFailureType('Quota')).toBe('Quota');
    expect(kindOfFailureType('BootFailed')).toBe('Failed');
    expect(kindOfFailureType('SshNotReady')).toBe('Failed');
    expect(kindOfFailureType('Timeout')).toBe('Failed');
    expect(kindOfFailureType(undefined)).toBe('Failed');
  });
});

describe('block scopes', () => {
  it('offer blocks only that offer', () => {
    const b = [blockFor(offers[0]!, 'offer', 'Capacity')];
    expect(offers.map((x) => isBlocked(x, b))).toEqual([true, false, false, false, false, false]);
  });
  it('zone blocks every type in that zone', () => {
    const b = [blockFor(offers[0]!, 'zone', 'Capacity')];
    expect(offers.map((x) => isBlocked(x, b))).toEqual([true, true, false, false, false, false]);
  });
  it('type-in-region blocks the type in every zone of the region', () => {
    const b = [blockFor(offers[0]!, 'type-in-region', 'Unavailable')];
    expect(offers.map((x) => isBlocked(x, b))).toEqual([true, false, true, false, false, false]);
  });
  it('region blocks every type in the region', () => {
    const b = [blockFor(offers[0]!, 'region', 'Quota')];
    expect(offers.map((x) => isBlocked(x, b))).toEqual([true, true, true, false, false, false]);
  });
  it('cloud blocks the whole cloud and nothing of another', () => {
    const b = [blockFor(offers[0]!, 'cloud', 'Quota')];
    expect(offers.map((x) => isBlocked(x, b))).toEqual([true, true, true, true, true, false]);
  });
  it.each(['offer', 'zone', 'type-in-region', 'region', 'cloud'] as const)(
    "a spot offer's Capacity at scope %s blocks spot offers only: the on-demand twin stays open",
    (scope) => {
      const spot: Offer = { ...offers[0]!, market: 'spot', pricePerHour: 1.2, onDemandPricePerHour: 3 };
      const b = [blockFor(spot, scope, 'Capacity')];
      expect([isBlocked(spot, b), isBlocked(offers[0]!, b), isBlocked({ ...offers[0]!, market: 'on-demand' }, b)]).toEqual([true, false, false]);
      // Any other kind (Quota) from a spot offer still blocks both markets at its scope.
      if (scope !== 'offer') expect(isBlocked(offers[0]!, [blockFor(spot, scope, 'Quota')])).toBe(true);
    },
  );
});

describe('the search', () => {
  it('walks offers in plan order, skipping blocked ones', () => {
    let s = newSearch(offers);
    const first = nextOffer(s)!;
    expect(first.index).toBe(0);
    s = afterFailure(s, first.index, first.offer, 'Quota', decide('Quota', 'create'), attempt(0, first.offer));
    const second = nextOffer(s)!;
    expect(second.offer).toEqual(o('r2', 't1'));
    expect(s.attempts).toHaveLength(1);
  });

  it('is exhausted when every remaining offer is blocked', () => {
    let s = newSearch(offers.slice(0, 2));
    s = afterFailure(s, 0, offers[0]!, 'Quota', decide('Quota', 'create'), attempt(0, offers[0]!));
    expect(nextOffer(s)).toBeUndefined();
  });

  it('Unavailable moves on without blocking the rest of the region', () => {
    let s = newSearch(offers);
    s = afterFailure(s, 0, offers[0]!, 'Unavailable', decide('Unavailable', 'prepare'), attempt(0, offers[0]!));
    expect(nextOffer(s)!.index).toBe(1);
  });

  it('replan keeps the attempt history and clears blocks', () => {
    let s = newSearch(offers.slice(0, 1));
    s = afterFailure(s, 0, offers[0]!, 'Capacity', decide('Capacity', 'create'), attempt(0, offers[0]!));
    expect(nextOffer(s)).toBeUndefined();
    const r = replan(s, offers.slice(0, 1));
    expect(r.round).toBe(1);
    expect(r.attempts).toHaveLength(1);
    expect(nextOffer(r)!.index).toBe(0);
  });

  it('is deterministic: the same failures give the same sequence', () => {
    const run = (): string[] => {
      let s = newSearch(offers);
      const seen: string[] = [];
      for (let n = 0; n < 10; n++) {
        const next = nextOffer(s);
        if (!next) break;
        seen.push(`${next.offer.region}/${next.offer.instanceType}/${next.offer.zone ?? ''}`);
        const kind = n % 2 === 0 ? 'Capacity' : 'Quota';
        s = afterFailure(s, next.index, next.offer, kind, decide(kind, 'create'), attempt(n, next.offer));
      }
      return seen;
    };
    expect(run()).toEqual(run());
    expect(run()).toEqual(['r1/t1/z1', 'r1/t2/z1', 'r2/t1/', 'r2/t2/', 'r3/t1/']);
  });

  it('renders the attempts table', () => {
    const a: AttemptRecord = { ...attempt(0, offers[0]!), kind: 'Capacity', phase: 'create', message: 'no room' };
    expect(attemptsTable([a])).toBe('#1 c/r1/z1/t1: failed (Capacity at create) — no room');
  });
});

describe('exhaustedKind', () => {
  const rec = (kind: AttemptRecord['kind']): AttemptRecord => ({
    index: 0,
    offer: { cloud: 'c', region: 'r', instanceType: 't' },
    outcome: 'failed',
    kind,
    instanceIds: [],
    compensated: true,
    startedAt: '',
    endedAt: '',
  });
  it('names the one kind every attempt failed with, not Capacity', () => {
    expect(exhaustedKind([rec('Unavailable')])).toBe('Unavailable');
    expect(exhaustedKind([rec('Quota'), rec('Quota')])).toBe('Quota');
  });
  it('takes the most frequent kind (ties: the latest), BootFailed counting as Failed', () => {
    expect(exhaustedKind([rec('Capacity'), rec('BootFailed'), rec('Failed')])).toBe('Failed');
    expect(exhaustedKind([rec('Capacity'), rec('Quota')])).toBe('Quota');
  });
  it('is Capacity when nothing was attempted', () => {
    expect(exhaustedKind([])).toBe('Capacity');
  });
});
