/** The loss cause: its kinds from what the cloud lists, its readable message, and both signal shapes. */
import { describe, expect, it } from 'vitest';
import { causeOfSignal, isLossCause, lossCauseOf, lossMessage } from '../../../src/core/loss';

describe('loss cause', () => {
  it('is vanished, failed or stopped by what the cloud still lists; the message is the one the watcher always wrote', () => {
    expect(lossCauseOf([])).toEqual({ kind: 'vanished' });
    expect(lossMessage(lossCauseOf([]))).toBe('the cloud no longer lists its instance');
    const failed = lossCauseOf([
      { id: 'i-1', status: 'Failed', reason: 'host error' },
      { id: 'i-2', status: 'Stopped' },
    ]);
    expect(failed).toEqual({ kind: 'failed', detail: 'i-1 is Failed (host error); i-2 is Stopped' });
    expect(lossCauseOf([{ id: 'i-3', status: 'Terminating' }])).toEqual({ kind: 'stopped', detail: 'i-3 is Terminating' });
    expect(lossMessage({ kind: 'preempted' })).toMatch(/spot/);
  });

  it('reads a signal of the current shape by its cause', () => {
    expect(causeOfSignal({ cause: { kind: 'stopped', detail: 'i-9 is Stopped' }, reason: 'ignored' })).toEqual({ kind: 'stopped', detail: 'i-9 is Stopped' });
  });

  it('reads a signal of the older shape (reason only) by its words, keeping them as the message', () => {
    expect(causeOfSignal({ reason: 'the cloud no longer lists its instance' })).toEqual({ kind: 'vanished' });
    expect(causeOfSignal({ reason: 'i-1 is Failed (host error)' })).toEqual({ kind: 'failed', detail: 'i-1 is Failed (host error)' });
    expect(causeOfSignal({ reason: 'i-1 is Stopped' })).toEqual({ kind: 'stopped', detail: 'i-1 is Stopped' });
    expect(causeOfSignal({ reason: 'test: the host failed' })).toEqual({ kind: 'failed', detail: 'test: the host failed' });
    expect(lossMessage(causeOfSignal({ reason: 'test: the host failed' }))).toBe('test: the host failed');
    expect(causeOfSignal({})).toEqual({ kind: 'vanished' });
    expect(causeOfSignal({ cause: { kind: 'eaten' }, reason: 'i-2 is Stopping' })).toEqual({ kind: 'stopped', detail: 'i-2 is Stopping' });
  });

  it('checks the shape', () => {
    expect(isLossCause({ kind: 'failed' })).toBe(true);
    expect(isLossCause({ kind: 'failed', detail: 3 })).toBe(false);
    expect(isLossCause('failed')).toBe(false);
  });
});
