import { describe, expect, it } from 'vitest';
import {
  attemptRecord,
  exhaustedLaunch,
  failedLaunch,
  judgeFailure,
  judgeLost,
  type AttemptAt,
  type AttemptEnd,
  type FailedEnd,
} from '../../../src/core/attempt';
import { FAILURE_TYPES } from '../../../src/core/failures';

const offer = { cloud: 'fake', region: 'fake-a', instanceType: 'gpu-1' };
const at: AttemptAt = { index: 2, offer, startedAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:01:00.000Z' };
const ok: Extract<AttemptEnd, { ok: true }> = {
  ok: true,
  createdAtMs: Date.parse('2026-01-01T00:00:10.000Z'),
  result: {
    offer,
    location: { cloud: 'fake', region: 'fake-a' },
    instanceId: 'i-1',
    endpoint: { host: 'h', port: 22, user: 'root' },
    hostKeyFingerprint: 'SHA256:x',
    hostKey: 'ssh-ed25519 AAAA',
  },
};
const failed = (o: Partial<FailedEnd> = {}): FailedEnd => ({
  ok: false,
  phase: 'create',
  type: 'Capacity',
  message: 'no capacity',
  cancelled: false,
  instanceIds: ['i-9'],
  ...o,
});

describe('attempt record', () => {
  it('a ready attempt: its instance, the create time, not compensated', () => {
    expect(attemptRecord(at, ok)).toEqual({
      index: 2,
      offer,
      outcome: 'ready',
      instanceIds: ['i-1'],
      compensated: false,
      startedAt: at.startedAt,
      endedAt: at.endedAt,
      createdAt: '2026-01-01T00:00:10.000Z',
    });
  });
  it('no create call: no createdAt', () => {
    expect(attemptRecord(at, failed({ phase: 'prepare', instanceIds: [] }))).not.toHaveProperty('createdAt');
  });
});

describe('judging a failed end (the header table)', () => {
  it('Capacity in create: failed, full compensation, the search goes on with a block', () => {
    const j = judgeFailure(at, failed());
    expect(j.kind).toBe('Capacity');
    expect(j.decision).toMatchObject({ compensate: 'full', next: 'continue' });
    expect(j.record).toMatchObject({ outcome: 'failed', phase: 'create', kind: 'Capacity', message: 'no capacity', instanceIds: ['i-9'] });
    expect(j.record.blocked).toEqual(j.decision.block);
  });
  it('Unavailable: outcome unavailable, only a cleanup', () => {
    const j = judgeFailure(at, failed({ type: 'Unavailable' }));
    expect(j.record.outcome).toBe('unavailable');
    expect(j.decision.compensate).toBe('cleanup');
  });
  it('BootFailed is recorded as its own kind', () => {
    const j = judgeFailure(at, failed({ phase: 'boot', type: FAILURE_TYPES.BootFailed }));
    expect(j.record).toMatchObject({ outcome: 'failed', kind: 'BootFailed', phase: 'boot' });
  });
  it('cancelled: outcome cancelled, abort; cleanup in prepare, full later', () => {
    const inPrepare = judgeFailure(at, failed({ cancelled: true, phase: 'prepare', type: 'Cancelled' }));
    expect(inPrepare.record).toMatchObject({ outcome: 'cancelled', kind: 'Cancelled' });
    expect(inPrepare.decision).toEqual({ compensate: 'cleanup', next: 'abort' });
    expect(judgeFailure(at, failed({ cancelled: true, phase: 'boot', type: 'Cancelled' })).decision).toEqual({ compensate: 'full', next: 'abort' });
  });
  it('InvalidRequest aborts the search', () => {
    expect(judgeFailure(at, failed({ type: 'InvalidRequest' })).decision.next).toBe('abort');
  });
});

describe('a hedged attempt that lost', () => {
  it('is cancelled in connect and names the winner; fully compensated, the search goes on', () => {
    const j = judgeLost(at, ok, 0);
    expect(j.record).toMatchObject({ outcome: 'cancelled', phase: 'connect', kind: 'Cancelled', message: 'ready after attempt #1 won', instanceIds: ['i-1'] });
    expect(j.decision).toEqual({ compensate: 'full', next: 'continue' });
    expect(judgeLost(at, ok, undefined).record.message).toBe('cancelled');
  });
});

describe('launch outcomes', () => {
  it('failed and exhausted carry the attempts', () => {
    const r = judgeFailure(at, failed()).record;
    expect(failedLaunch('fatal', 'Credentials', 'Credentials: x', [r])).toEqual({
      kind: 'failed',
      details: { reason: 'fatal', attempts: [r] },
      errorKind: 'Credentials',
      message: 'Credentials: x',
    });
    const e = exhaustedLaunch([r]);
    expect(e).toMatchObject({ kind: 'failed', details: { reason: 'exhausted' }, errorKind: 'Capacity' });
    expect(e.kind === 'failed' && e.message).toMatch(/^every offer was tried and failed:\n/);
  });
});
