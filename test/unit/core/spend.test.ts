import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '../../../src/core/api';
import type { Offer } from '../../../src/core/provider';
import { budgetPlan, spendSoFar } from '../../../src/core/spend';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();
const offer = (region: string, pricePerHour?: number): Offer => ({
  cloud: 'c',
  region,
  instanceType: 't',
  ...(pricePerHour !== undefined ? { pricePerHour } : {}),
});
const attempt = (index: number, o: Offer, a: Partial<AttemptRecord>): AttemptRecord => ({
  index,
  offer: o,
  outcome: 'failed',
  instanceIds: [],
  compensated: true,
  startedAt: at(0),
  endedAt: at(0),
  ...a,
});

describe('spendSoFar', () => {
  it('a spot VM is billed at the spot price charged, never the on-demand price beside it; its budget projects at the spot rate', () => {
    const spot: Offer = { ...offer('a', 1.2), market: 'spot', onDemandPricePerHour: 2.99 };
    const won = attempt(0, spot, { outcome: 'ready', instanceIds: ['i-1'], compensated: false, createdAt: at(0) });
    const s = spendSoFar({ attempts: [won] }, T0 + 3_600_000);
    expect([s.totalUsd, s.ratePerHour, s.attempts[0]?.pricePerHour, s.attempts[0]?.offer]).toEqual([1.2, 1.2, 1.2, 'c/a/-/t/spot']);
    // $6 at $1.20/h: 100 % after 5 h, 80 % about an hour before (at $2.99/h it would be ~2 h).
    const plan = budgetPlan({ attempts: [won] }, 6, T0);
    expect(plan.endAtMs).toBe(T0 + 5 * 3_600_000);
    expect(Math.abs(plan.warnAtMs! - (T0 + 4 * 3_600_000))).toBeLessThanOrEqual(1);
  });

  it('an attempt that created nothing costs nothing', () => {
    const s = spendSoFar({ attempts: [attempt(0, offer('a', 36), { kind: 'Capacity', endedAt: at(30) })] }, T0 + 3_600_000);
    expect(s.totalUsd).toBe(0);
    expect(s.attempts[0]).toMatchObject({ billedMs: 0, usd: 0, running: false });
  });

  it('a failed instance is billed from its create until its confirmed deletion; the winner until now', () => {
    const attempts = [
      attempt(0, offer('a', 36), { instanceIds: ['i-1'], createdAt: at(10), endedAt: at(110), kind: 'BootFailed' }),
      attempt(1, offer('b', 72), { outcome: 'ready', instanceIds: ['i-2'], compensated: false, startedAt: at(110), createdAt: at(120), endedAt: at(150) }),
    ];
    const s = spendSoFar({ attempts }, T0 + 220_000);
    // 100 s at 36 $/h = 1 $; 100 s at 72 $/h = 2 $
    expect(s.attempts.map((a) => [a.billedMs, a.usd, a.running])).toEqual([
      [100_000, 1, false],
      [100_000, 2, true],
    ]);
    expect(s.totalUsd).toBe(3);
    expect(s.ratePerHour).toBe(72);
  });

  it('the winner stops at the VM end; a failed one still being deleted runs on', () => {
    const attempts = [
      attempt(0, offer('a', 36), { instanceIds: ['i-1'], createdAt: at(0), compensated: false }),
      attempt(1, offer('b', 36), { outcome: 'ready', instanceIds: ['i-2'], compensated: false, createdAt: at(0) }),
    ];
    const s = spendSoFar({ attempts, endedAt: at(100) }, T0 + 200_000);
    expect(s.attempts.map((a) => [a.billedMs, a.running])).toEqual([
      [200_000, true],
      [100_000, false],
    ]);
  });

  it('older histories without createdAt use startedAt (estimated); unknown prices are flagged', () => {
    const s = spendSoFar({ attempts: [attempt(0, offer('a'), { outcome: 'ready', instanceIds: ['i'], startedAt: at(5) })] }, T0 + 65_000);
    expect(s.attempts[0]).toMatchObject({ billedMs: 60_000, usd: 0, estimated: true });
    expect(s.unknownPrice).toBe(true);
  });
});

describe('budgetPlan', () => {
  const up = [attempt(0, offer('a', 36), { outcome: 'ready', instanceIds: ['i'], compensated: false, createdAt: at(0) })];
  it('projects 80 % and 100 % at the running price', () => {
    // 1 $ budget at 36 $/h: 100 s in total, 80 s for the warning
    expect(budgetPlan({ attempts: up }, 1, T0 + 10_000)).toEqual({ warnAtMs: T0 + 80_000, endAtMs: T0 + 100_000 });
  });
  it('a point already passed is now; nothing billed and nothing spent is never', () => {
    expect(budgetPlan({ attempts: up }, 1, T0 + 90_000)).toEqual({ warnAtMs: T0 + 90_000, endAtMs: T0 + 100_000 });
    expect(budgetPlan({ attempts: [] }, 1, T0)).toEqual({});
  });
  it('after a --recover relaunch the earlier runs count: spend so far and the budget points include them', () => {
    const recovered = { spentUsd: 0.5 };
    // 0.5 $ spent before, 36 $/h now: 80 % of 1 $ at 30 s, 100 % at 50 s
    const plan = budgetPlan({ attempts: up, recovered }, 1, T0 + 10_000);
    // (rounded up to the next ms: 0.8 − 0.6 is not exact in floating point)
    expect(plan.warnAtMs! - (T0 + 30_000)).toBeGreaterThanOrEqual(0);
    expect(plan.warnAtMs! - (T0 + 30_000)).toBeLessThanOrEqual(1);
    expect(plan.endAtMs).toBe(T0 + 50_000);
    const s = spendSoFar({ attempts: up, recovered }, T0 + 10_000);
    expect(s).toMatchObject({ totalUsd: 0.6, priorUsd: 0.5 });
    expect(spendSoFar({ attempts: up }, T0 + 10_000).priorUsd).toBeUndefined();
  });
});
