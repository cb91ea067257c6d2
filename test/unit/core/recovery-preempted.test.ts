import { describe, expect, it } from 'vitest';
import { decideAfterLoss, replacementSpec, retiringLine, type LossFacts } from '../../../src/core/recovery';
import { lossMessage, preemptedCauseOf } from '../../../src/core/loss';

const AT = '2026-01-01T12:00:00.000Z';
const notice = { kind: 'preempted' as const, noticeAt: AT, deadline: '2026-01-01T12:02:00.000Z' };
const facts = (f: Partial<LossFacts> = {}): LossFacts => ({
  spec: { recover: true, spot: 'auto' },
  fleetSlot: false,
  stopAsked: false,
  spentUsd: 1,
  maxRecoveries: 5,
  spotAutoPreemptions: 3,
  spotAutoWindowMs: 24 * 3_600_000,
  lostAt: AT,
  cause: notice,
  ...f,
});
const rec = (preemptions: string[]) => ({ count: preemptions.length, lastLostAt: 'x', lastReason: 'y', spentUsd: 0, preemptions });

describe('decideAfterLoss: a preempted VM', () => {
  it('with its deadline ahead: replace at once (count+1), the deadline carried, the preemption remembered', () => {
    expect(decideAfterLoss(facts())).toEqual({
      kind: 'replace',
      deadline: notice.deadline,
      record: {
        count: 1,
        lastLostAt: AT,
        lastReason: 'preempted (notice 12:00:00, deadline 12:02:00)',
        lastCause: notice,
        spentUsd: 1,
        preemptions: [AT],
      },
    });
  });
  it('without a notice, or with its deadline passed: the ordinary relaunch', () => {
    expect(decideAfterLoss(facts({ cause: { kind: 'preempted' } }))).toMatchObject({ kind: 'relaunch', record: { count: 1 } });
    expect(decideAfterLoss(facts({ cause: { ...notice, deadline: AT } }))).toMatchObject({ kind: 'relaunch' });
  });
  it('the rows above it still win: no recover, a teardown asked, the bound, the budget', () => {
    expect(decideAfterLoss(facts({ spec: { spot: 'auto' } }))).toEqual({ kind: 'stay' });
    expect(decideAfterLoss(facts({ stopAsked: true }))).toMatchObject({ kind: 'stay' });
    expect(decideAfterLoss(facts({ spec: { recover: true, budgetUsd: 1 } }))).toMatchObject({ kind: 'stay' });
    expect(decideAfterLoss(facts({ recovered: { ...rec([]), count: 5 } }))).toMatchObject({ kind: 'stay' });
  });
  it("spot 'auto': the third preemption within 24 h makes the next launch on-demand; older ones do not count", () => {
    const two = rec(['2026-01-01T08:00:00.000Z', '2026-01-01T10:00:00.000Z']);
    expect(decideAfterLoss(facts({ recovered: two }))).toMatchObject({ kind: 'replace', record: { onDemand: true, preemptions: [...two.preemptions, AT] } });
    const stale = rec(['2025-12-30T08:00:00.000Z', '2026-01-01T10:00:00.000Z']);
    const d = decideAfterLoss(facts({ recovered: stale }));
    expect(d.kind === 'replace' && d.record.onDemand).toBeFalsy();
    expect(d.record?.preemptions).toEqual(['2026-01-01T10:00:00.000Z', AT]);
    expect(decideAfterLoss(facts({ recovered: two, spec: { recover: true, spot: 'only' } }))).not.toMatchObject({ record: { onDemand: true } });
  });
  it('another loss keeps the recent preemptions but adds none', () => {
    const d = decideAfterLoss(facts({ cause: { kind: 'vanished' }, recovered: rec(['2026-01-01T10:00:00.000Z']) }));
    expect(d).toMatchObject({ kind: 'relaunch', record: { preemptions: ['2026-01-01T10:00:00.000Z'] } });
    expect(d.record?.onDemand).toBeUndefined();
  });
});

describe('replacementSpec', () => {
  it('a replacement launches one attempt at a time; on-demand drops spot; otherwise the spec as is', () => {
    const spec = { name: 'a', spot: 'auto' as const, parallel: 3 };
    expect(replacementSpec(spec, { replacing: false, onDemand: false })).toBe(spec);
    expect(replacementSpec(spec, { replacing: true, onDemand: false })).toEqual({ name: 'a', spot: 'auto' });
    expect(replacementSpec(spec, { replacing: false, onDemand: true })).toEqual({ name: 'a', parallel: 3 });
    expect(replacementSpec(spec, { replacing: true, onDemand: true })).toEqual({ name: 'a' });
  });
});

describe('the preempted cause for people', () => {
  it('names notice and deadline (UTC clock), then the cloud words', () => {
    expect(lossMessage(notice)).toBe('preempted (notice 12:00:00, deadline 12:02:00)');
    expect(lossMessage({ kind: 'preempted', noticeAt: AT, detail: 'i-1 marked-for-termination' })).toBe(
      'preempted (notice 12:00:00): i-1 marked-for-termination',
    );
    expect(lossMessage({ kind: 'preempted' })).toBe('preempted: the spot market reclaimed its instance');
  });
  it('preemptedCauseOf takes the earliest notice of the listed instances', () => {
    expect(preemptedCauseOf([{ id: 'i-1' }])).toBeUndefined();
    const c = preemptedCauseOf([
      { id: 'i-2', preemption: { noticeAt: '2026-01-01T12:01:00.000Z' } },
      { id: 'i-1', preemption: { noticeAt: AT, deadline: notice.deadline, detail: 'marked-for-termination' } },
    ]);
    expect(c).toEqual({ ...notice, detail: 'i-1 marked-for-termination' });
  });
  it('retiringLine says until when the old instance runs', () => {
    const r = { instanceIds: ['i-1'], location: { cloud: 'fake', region: 'fake-a' }, deadline: notice.deadline };
    expect(retiringLine(r)).toContain('at 2026-01-01T12:02:00.000Z at the latest');
    expect(retiringLine({ ...r, goneAt: AT })).toContain(`deleted ${AT}`);
  });
});

describe('decideAfterLoss: a fleet slot preempted', () => {
  const slot = (f: Partial<LossFacts> = {}): LossFacts => facts({ fleetSlot: true, spec: { spot: 'only' }, ...f });
  it('under spot with the deadline ahead: the slot replaces itself (no --recover needed), counted', () => {
    expect(decideAfterLoss(slot())).toMatchObject({ kind: 'replace', deadline: notice.deadline, record: { count: 1 } });
  });
  it('without a notice, past the deadline, without spot, or any other loss: the fleet replaces it (stay, no record)', () => {
    expect(decideAfterLoss(slot({ cause: { kind: 'preempted' } }))).toEqual({ kind: 'stay' });
    expect(decideAfterLoss(slot({ cause: { ...notice, deadline: AT } }))).toEqual({ kind: 'stay' });
    expect(decideAfterLoss(slot({ spec: {} }))).toEqual({ kind: 'stay' });
    expect(decideAfterLoss(slot({ spec: { recover: true, spot: 'only' }, cause: { kind: 'vanished' } }))).toEqual({ kind: 'stay' });
  });
  it('the bound and a teardown asked still hold for a slot', () => {
    expect(decideAfterLoss(slot({ stopAsked: true }))).toMatchObject({ kind: 'stay', record: { gaveUp: 'a teardown or cancel was asked' } });
    expect(decideAfterLoss(slot({ recovered: rec([AT, AT, AT, AT, AT]) }))).toMatchObject({ kind: 'stay' });
  });
});
