import { describe, expect, it } from 'vitest';
import { decideAfterLoss, recoveryLine, type LossFacts } from '../../../src/core/recovery';

const facts = (f: Partial<LossFacts> = {}): LossFacts => ({
  spec: { recover: true },
  fleetSlot: false,
  stopAsked: false,
  spentUsd: 1,
  maxRecoveries: 5,
  spotAutoPreemptions: 3,
  spotAutoWindowMs: 24 * 3_600_000,
  lostAt: '2026-01-01T00:00:00.000Z',
  cause: { kind: 'vanished' },
  ...f,
});

describe('decideAfterLoss (--recover)', () => {
  it('without the flag, or for a fleet slot, the VM stays lost and records nothing', () => {
    expect(decideAfterLoss(facts({ spec: {} }))).toEqual({ kind: 'stay' });
    expect(decideAfterLoss(facts({ fleetSlot: true }))).toEqual({ kind: 'stay' });
  });
  it('relaunches with the count, the loss and the spend of every run so far', () => {
    expect(decideAfterLoss(facts())).toEqual({
      kind: 'relaunch',
      record: {
        count: 1,
        lastLostAt: '2026-01-01T00:00:00.000Z',
        lastReason: 'the cloud no longer lists its instance',
        lastCause: { kind: 'vanished' },
        spentUsd: 1,
      },
    });
    const again = decideAfterLoss(facts({ recovered: { count: 2, lastLostAt: 'x', lastReason: 'y', spentUsd: 0.5 }, spentUsd: 3 }));
    expect(again).toMatchObject({ kind: 'relaunch', record: { count: 3, spentUsd: 3 } });
  });
  it('stays lost, saying why, at the bound, with the budget spent, or when a teardown was asked', () => {
    const at5 = decideAfterLoss(facts({ recovered: { count: 5, lastLostAt: 'x', lastReason: 'y', spentUsd: 0 } }));
    expect(at5).toMatchObject({ kind: 'stay', record: { count: 5, gaveUp: expect.stringContaining('bound is 5') } });
    expect(decideAfterLoss(facts({ spec: { recover: true, budgetUsd: 1 }, spentUsd: 1 }))).toMatchObject({
      kind: 'stay',
      record: { gaveUp: expect.stringContaining('budget') },
    });
    expect(decideAfterLoss(facts({ spec: { recover: true, budgetUsd: 2 } })).kind).toBe('relaunch');
    expect(decideAfterLoss(facts({ stopAsked: true }))).toMatchObject({ kind: 'stay', record: { gaveUp: expect.stringContaining('teardown') } });
  });
  it("records the cause's readable message as the reason", () => {
    const d = decideAfterLoss(facts({ cause: { kind: 'failed', detail: 'i-1 is Failed (host error)' } }));
    expect(d).toMatchObject({ record: { lastReason: 'i-1 is Failed (host error)', lastCause: { kind: 'failed', detail: 'i-1 is Failed (host error)' } } });
  });
  it('reads as one line', () => {
    expect(recoveryLine({ count: 1, lastLostAt: 'T', lastReason: 'gone', spentUsd: 0 })).toBe('1 time; last lost T: gone');
  });
});
