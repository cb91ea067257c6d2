import { describe, expect, it } from 'vitest';
import {
  CAPACITY_MEMORY_DEFAULT_MS,
  capacityKey,
  demoteRemembered,
  liveEntries,
  nextExpiry,
  parseCapacityMemory,
  remember,
  type CapacityEntry,
} from '../../../src/core/capacity-memory';

const offer = (region: string, instanceType = 'gpu-1') => ({ cloud: 'fake', region, instanceType });
const entry = (region: string, seenAtMs: number, untilMs: number, instanceType = 'gpu-1'): CapacityEntry => ({
  ...offer(region, instanceType),
  seenAtMs,
  untilMs,
});

describe('capacity memory (pure)', () => {
  it('moves live remembered offers to the end, keeping both parts in order, and says why', () => {
    const offers = ['r1', 'r2', 'r3', 'r4'].map((r) => offer(r));
    const { offers: out, demoted } = demoteRemembered(offers, [entry('r3', 0, 10_000), entry('r1', 1_000, 10_000)], 5_000);
    expect(out.map((o) => o.region)).toEqual(['r2', 'r4', 'r1', 'r3']);
    expect(demoted.map((d) => d.key)).toEqual(['fake/r1/gpu-1', 'fake/r3/gpu-1']);
    expect(demoted[0]!.reason).toMatch(/answered Capacity 4s ago .*tried last/);
  });

  it('forgets an entry when its window ends; the key ignores the zone but not the type', () => {
    const offers = [{ ...offer('r1'), zone: 'r1a' }, offer('r1', 'gpu-2')];
    expect(demoteRemembered(offers, [entry('r1', 0, 10_000)], 10_000).demoted).toEqual([]);
    const { offers: out } = demoteRemembered(offers, [entry('r1', 0, 10_000)], 9_999);
    expect(out.map((o) => o.instanceType)).toEqual(['gpu-2', 'gpu-1']);
    expect(capacityKey({ ...offer('r1'), zone: 'z' } as never)).toBe('fake/r1/gpu-1');
  });

  it('remember replaces a key, drops ended entries and is bounded (those ending first go)', () => {
    let es: CapacityEntry[] = [];
    es = remember(es, entry('r1', 0, 100), 0);
    es = remember(es, entry('r2', 0, 50), 0);
    es = remember(es, entry('r1', 10, 200), 10);
    expect(es.map((e) => [e.region, e.untilMs])).toEqual([
      ['r2', 50],
      ['r1', 200],
    ]);
    es = remember(es, entry('r3', 60, 300), 60);
    expect(es.map((e) => e.region)).toEqual(['r1', 'r3']);
    const many = Array.from({ length: 10 }, (_, i) => entry(`x${i}`, 0, 1_000 + i)).reduce<CapacityEntry[]>((a, e) => remember(a, e, 0, 4), []);
    expect(many.map((e) => e.region).sort()).toEqual(['x6', 'x7', 'x8', 'x9']);
    expect(nextExpiry(many)).toBe(1_006);
    expect(nextExpiry([])).toBeUndefined();
    expect(liveEntries(many, 1_008).map((e) => e.region)).toEqual(['x9']);
  });

  it('parses GPUPROV_CAPACITY_MEMORY', () => {
    expect(parseCapacityMemory(undefined)).toBe(CAPACITY_MEMORY_DEFAULT_MS);
    expect(parseCapacityMemory('')).toBe(180_000);
    expect(parseCapacityMemory('0')).toBe(0);
    expect(parseCapacityMemory('90s')).toBe(90_000);
    expect(parseCapacityMemory('5m')).toBe(300_000);
    expect(parseCapacityMemory('1500')).toBe(1_500);
    expect(() => parseCapacityMemory('soon')).toThrow(/GPUPROV_CAPACITY_MEMORY/);
  });
});
