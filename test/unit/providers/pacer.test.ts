import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallPacer, pacedProvider } from '../../../src/providers/pacer';
import { ProviderRegistry } from '../../../src/providers/registry';
import { FakeProvider } from '../../harness/fake-provider';
import { maxInWindow } from '../../../bench/rate-limit';

afterEach(() => vi.useRealTimers());

describe('CallPacer', () => {
  it('hands 100 simultaneous callers slots 1/rate apart: never more than the rate in any second', async () => {
    vi.useFakeTimers();
    const pacer = new CallPacer(25);
    const at: number[] = [];
    const all = Promise.all(Array.from({ length: 100 }, () => pacer.take().then(() => at.push(Date.now()))));
    await vi.runAllTimersAsync();
    await all;
    expect(at).toHaveLength(100);
    expect(maxInWindow(at, 1_000)).toBe(25);
    expect(at[99]! - at[0]!).toBe(99 * 40);
  });

  it('keeps the gap after a stalled event loop: the queue is delayed, never released at once', async () => {
    vi.useFakeTimers();
    const pacer = new CallPacer(10);
    const at: number[] = [];
    const all = Promise.all(Array.from({ length: 10 }, () => pacer.take().then(() => at.push(Date.now()))));
    await vi.advanceTimersByTimeAsync(0);
    vi.setSystemTime(Date.now() + 3_000); // the loop was busy for 3 s: every slot is overdue
    await vi.runAllTimersAsync();
    await all;
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(100);
    expect(maxInWindow(at, 1_000)).toBeLessThanOrEqual(10);
  });

  it('lets a caller through at once after a quiet spell (no catch-up burst either)', async () => {
    vi.useFakeTimers();
    const pacer = new CallPacer(2);
    await pacer.take();
    vi.advanceTimersByTime(10_000);
    const t0 = Date.now();
    const at: number[] = [];
    const all = Promise.all(Array.from({ length: 3 }, () => pacer.take().then(() => at.push(Date.now() - t0))));
    await vi.runAllTimersAsync();
    await all;
    expect(at).toEqual([0, 500, 1_000]);
  });
});

describe('pacedProvider and the registry', () => {
  it('paces every vendor call, keeps capabilities() synchronous and the adapter itself as `this`', async () => {
    vi.useFakeTimers();
    const fake = new FakeProvider({ name: 'fake' });
    const paced = pacedProvider(fake, new CallPacer(10));
    expect(paced.capabilities()).toEqual(fake.capabilities());
    expect(paced.name).toBe('fake');
    const t0 = Date.now();
    const plans = Promise.all([1, 2, 3].map(() => paced.plan({ vmName: 'p', k8s: false })));
    await vi.runAllTimersAsync();
    const offers = await plans;
    expect(offers[0]!.length).toBeGreaterThan(0);
    const at = fake.calls.filter((c) => c.primitive === 'plan').map((c) => c.at - t0);
    expect(at).toEqual([0, 100, 200]);
  });

  it('paces only the clouds given a rate', () => {
    const a = new FakeProvider({ name: 'a' });
    const b = new FakeProvider({ name: 'b' });
    const r = new ProviderRegistry([a, b], { perSecond: (cloud) => (cloud === 'a' ? 5 : undefined) });
    expect(r.get('a')).not.toBe(a);
    expect(r.get('b')).toBe(b);
    expect(new ProviderRegistry([a]).get('a')).toBe(a);
  });
});
