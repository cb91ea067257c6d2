/** lookAgain: short waits inside one activity attempt, longer ones left to the retry policy. */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { notReady } from '../../../src/activities/failures';
import { lookAgain } from '../../../src/activities/look-again';

/** A clock that only moves when the helper sleeps. */
function clock() {
  let t = 0;
  const slept: number[] = [];
  return { now: () => t, sleep: async (ms: number) => void (slept.push(ms), (t += ms)), slept };
}

describe('lookAgain', () => {
  it('looks again in the attempt while the next look is due soon, and returns the first success', async () => {
    const c = clock();
    let n = 0;
    const v = await lookAgain(async () => (++n < 4 ? Promise.reject(notReady('booting', 500)) : 'up'), { now: c.now, sleep: c.sleep });
    expect(v).toBe('up');
    expect(c.slept).toEqual([500, 500, 500]);
  });

  it('throws the failure for the retry policy when the next look is far off', async () => {
    const c = clock();
    const far = notReady('sparse phase', 5_000);
    await expect(lookAgain(async () => Promise.reject(far), { now: c.now, sleep: c.sleep })).rejects.toBe(far);
    expect(c.slept).toEqual([]);
  });

  it('stops looking in the attempt at the end of the window', async () => {
    const c = clock();
    let n = 0;
    await expect(lookAgain(async () => (n++, Promise.reject(notReady('slow', 1_000))), { now: c.now, sleep: c.sleep, windowMs: 3_000 })).rejects.toMatchObject({
      type: 'NotReady',
    });
    expect(n).toBe(4); // at 0, 1, 2 and 3 s
  });

  it('uses the default delay for a failure without one (SSH probe), and passes other errors through at once', async () => {
    const c = clock();
    let n = 0;
    const ssh = () => ApplicationFailure.create({ type: 'SshNotReady', message: 'ECONNREFUSED' });
    await expect(lookAgain(async () => (++n < 3 ? Promise.reject(ssh()) : 'ok'), { now: c.now, sleep: c.sleep, defaultDelayMs: 300 })).resolves.toBe('ok');
    expect(c.slept).toEqual([300, 300]);
    const final = ApplicationFailure.create({ type: 'BootFailed', message: 'gone', nonRetryable: true });
    const transient = ApplicationFailure.create({ type: 'Transient', message: '503' });
    for (const err of [final, transient, new Error('bug')]) {
      const d = clock();
      await expect(lookAgain(async () => Promise.reject(err), { now: d.now, sleep: d.sleep })).rejects.toBe(err);
      expect(d.slept).toEqual([]);
    }
  });

  it('reads string delays ("1.5s", "800ms")', async () => {
    for (const [delay, ms] of [
      ['1.5s', 1_500],
      ['800ms', 800],
    ] as const) {
      const c = clock();
      let n = 0;
      const f = ApplicationFailure.create({ type: 'NotReady', message: 'x', nextRetryDelay: delay });
      await lookAgain(async () => (n++ === 0 ? Promise.reject(f) : 1), { now: c.now, sleep: c.sleep });
      expect(c.slept).toEqual([ms]);
    }
  });
});
