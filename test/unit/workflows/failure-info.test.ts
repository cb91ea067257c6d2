/** failureInfo: the type is the closed vocabulary or one of the SDK's kinds, never another string. */
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURE_TYPES, SDK_FAILURE_KINDS } from '../../../src/core/failures';
import { failureInfo } from '../../../src/workflows/failure-info';

const activity = (cause: Error): ActivityFailure => new ActivityFailure('a', 'act', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, cause);

describe('failureInfo', () => {
  it('keeps a vocabulary type, with its block and phase details', () => {
    const f = failureInfo(
      activity(ApplicationFailure.create({ type: FAILURE_TYPES.Capacity, message: 'full', details: [{ block: 'zone', phase: 'prepare' }] })),
    );
    expect(f).toEqual({ type: 'Capacity', message: 'full', cancelled: false, block: 'zone', phase: 'prepare' });
  });

  it('reads the SDK own failures as Cancelled, Timeout and Error', () => {
    expect(failureInfo(new CancelledFailure('x'))).toMatchObject({ type: SDK_FAILURE_KINDS.Cancelled, cancelled: true });
    expect(failureInfo(activity(new TimeoutFailure('t', undefined, TimeoutType.START_TO_CLOSE)))).toMatchObject({ type: SDK_FAILURE_KINDS.Timeout });
    expect(failureInfo(activity(ApplicationFailure.create({ type: 'TypeError', message: 'boom' })))).toMatchObject({
      type: SDK_FAILURE_KINDS.Error,
      message: 'boom',
    });
    expect(failureInfo(new Error('plain'))).toMatchObject({ type: SDK_FAILURE_KINDS.Error, message: 'plain' });
  });
});
