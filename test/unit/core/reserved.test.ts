import { describe, expect, it } from 'vitest';
import { reservedAskOf } from '../../../src/core/reserved-ask';
import {
  blockKey,
  bootCapsOf,
  DEFAULT_QUEUE_WAIT_MS,
  leavePlan,
  leaveState,
  planAskOf,
  queuedEnd,
  upfrontProblem,
  waitingLine,
  wakeAt,
} from '../../../src/core/reserved-window';
import { spendSoFar } from '../../../src/core/spend';
import type { Offer } from '../../../src/core/provider';

const H = 3_600_000;
const T = { reservedTeardownMarginMs: 20 * 60_000, reservedWarnLeadMs: 30 * 60_000 };
const now = Date.parse('2026-12-07T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const block = (startMs: number, endMs: number): Offer => ({
  cloud: 'fake',
  region: 'fake-a',
  instanceType: 'gpu-1',
  market: 'reserved',
  pricePerHour: 0,
  reservation: { id: 'cb-1', kind: 'capacity-block', total: 1, free: 1, start: iso(startMs), end: iso(endMs) },
});

describe('reserved window decisions', () => {
  it('wakes at a start ahead, not at one passed or absent', () => {
    expect(wakeAt(block(now + 72 * H, now + 96 * H), now)).toBe(now + 72 * H);
    expect(wakeAt(block(now - H, now + H), now)).toBeUndefined();
    expect(wakeAt({}, now)).toBeUndefined();
  });

  it('says what it waits for', () => {
    expect(waitingLine({ id: 'cb-1', kind: 'capacity-block' }, now)).toBe('waiting for block cb-1, starts at 2026-12-07T00:00:00.000Z');
    expect(waitingLine({ id: 'r-1', kind: 'capacity-reservation' }, now)).toMatch(/^waiting for reservation r-1/);
  });

  it('caps the TTL at the window end less the margin, with a warning before', () => {
    const r = { end: iso(now + 24 * H) };
    expect(leavePlan(r, undefined, now, T)).toEqual({
      ttlAtMs: now + 24 * H - 20 * 60_000,
      capped: true,
      warnAtMs: now + 24 * H - 50 * 60_000,
      leaveByMs: now + 24 * H,
    });
    // the cloud's leaveBy wins over end
    expect(leavePlan({ ...r, leaveBy: iso(now + 23 * H) }, undefined, now, T)?.leaveByMs).toBe(now + 23 * H);
  });

  it('keeps an earlier user TTL, without warning', () => {
    expect(leavePlan({ end: iso(now + 24 * H) }, 2 * H, now, T)).toEqual({ ttlAtMs: now + 2 * H, capped: false, leaveByMs: now + 24 * H });
    expect(leavePlan(undefined, 2 * H, now, T)).toEqual({ ttlAtMs: now + 2 * H, capped: false });
    expect(leavePlan(undefined, undefined, now, T)).toBeUndefined();
  });

  it('tears down at once when the window is already too short at Ready', () => {
    expect(leavePlan({ end: iso(now + 10 * 60_000) }, undefined, now, T)).toMatchObject({ ttlAtMs: now, warnAtMs: now, capped: true });
  });

  it('records the leave plan of a reserved offer only', () => {
    const s = leaveState(block(now, now + 24 * H), undefined, now, T);
    expect(s?.line).toBe(`the capacity block cb-1 ends at ${iso(now + 24 * H)}: the VM is torn down at ${iso(now + 24 * H - 20 * 60_000)}`);
    expect(leaveState({ cloud: 'fake', region: 'a', instanceType: 't' }, undefined, now, T)).toBeUndefined();
  });

  it('waits on a queued offer up to --wait, and calls its timeout Capacity', () => {
    const caps = { bootTimeoutMs: 600_000 };
    expect(bootCapsOf(caps, { queued: true }, { kind: 'queue', waitMs: 3 * H }).bootTimeoutMs).toBe(3 * H);
    expect(bootCapsOf(caps, { queued: true }, undefined).bootTimeoutMs).toBe(DEFAULT_QUEUE_WAIT_MS);
    expect(bootCapsOf(caps, {}, { kind: 'queue', waitMs: 3 * H })).toBe(caps);
    expect(queuedEnd({ queued: true }, 'boot', 'Timeout', 3 * H)?.type).toBe('Capacity');
    expect(queuedEnd({ queued: true }, 'connect', 'Timeout', 3 * H)).toBeUndefined();
    expect(queuedEnd({}, 'boot', 'Timeout', 3 * H)).toBeUndefined();
  });

  it('buys under one key per VM life, within the budget, then plans the bought block', () => {
    expect(blockKey('vm-a', 'run-1')).toBe('gpuprov-block:vm-a:run-1');
    expect(upfrontProblem(500, 100)).toMatch(/\$500 upfront, more than --budget \$100/);
    expect(upfrontProblem(50, 100)).toBeUndefined();
    expect(upfrontProblem(50, undefined)).toBeUndefined();
    expect(planAskOf({ kind: 'capacity-block', offeringId: 'o' }, 'cb-9')).toEqual({ kind: 'reservation', id: 'cb-9' });
    expect(planAskOf({ kind: 'queue', waitMs: 1 }, 'x')).toEqual({ kind: 'queue', waitMs: 1 });
  });

  it('counts a bought block upfront in the spend, once', () => {
    const base = { attempts: [], endedAt: undefined };
    expect(spendSoFar({ ...base, reserved: { block: { upfrontPrice: 700 } } }, now)).toMatchObject({ totalUsd: 700, upfrontUsd: 700 });
    expect(spendSoFar({ ...base, reserved: { block: { upfrontPrice: 700, inSpend: false } } }, now).totalUsd).toBe(0);
  });
});

describe('reserved flags', () => {
  it('makes one ask', () => {
    expect(reservedAskOf({})).toEqual({});
    expect(reservedAskOf({ reservation: 'cr-1' })).toEqual({ ask: { kind: 'reservation', id: 'cr-1' } });
    expect(reservedAskOf({ queue: true })).toEqual({ ask: { kind: 'queue', waitMs: DEFAULT_QUEUE_WAIT_MS } });
    expect(reservedAskOf({ queue: true, waitMs: 60_000 })).toEqual({ ask: { kind: 'queue', waitMs: 60_000 } });
    expect(reservedAskOf({ capacityBlock: 'o-1', yes: true, durationHours: 24, count: 2, gpu: { model: 'H100', count: 8 } })).toEqual({
      ask: { kind: 'capacity-block', offeringId: 'o-1', query: { count: 2, durationHours: 24, gpuModel: 'H100', gpuCount: 8 } },
    });
  });

  it.each([
    [{ capacityBlock: 'o-1', durationHours: 24 }, '--yes'],
    [{ capacityBlock: 'o-1', yes: true }, '--duration'],
    [{ durationHours: 24 }, '--duration'],
    [{ count: 2 }, '--count'],
    [{ startAfter: '2027-01-01T00:00:00Z' }, '--start-after'],
    [{ yes: true }, '--yes'],
    [{ waitMs: 60_000 }, '--wait'],
    [{ reservation: 'r', queue: true }, '--queue'],
    [{ reservation: 'r', spot: true }, '--spot'],
    [{ queue: true, parallel: 3 }, '--parallel'],
  ])('refuses %j naming %s', (flags, flag) => {
    const r = reservedAskOf(flags);
    expect('problem' in r && r.problem.flag).toBe(flag);
  });
});
