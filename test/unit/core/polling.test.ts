import { describe, expect, it } from 'vitest';
import { bootPollDelayMs, bootPolling, DENSE_BOOT_POLL_MS, sshPolling } from '../../../src/core/polling';
import { leakDelayMs, withTuning } from '../../../src/core/tuning';

describe('polling schedules', () => {
  it('boot polling starts fast and backs off to the poll interval within the boot deadline', () => {
    const p = bootPolling({ pollIntervalMs: 4000, bootTimeoutMs: 600_000, typicalBootMs: 60_000 });
    expect(p.initialIntervalMs).toBe(1000);
    expect(p.maximumIntervalMs).toBe(4000);
    expect(p.deadlineMs).toBe(600_000);
    expect(p.backoffCoefficient).toBeGreaterThan(1);
  });
  it('never polls faster than 100 ms', () => {
    expect(bootPolling({ pollIntervalMs: 50, bootTimeoutMs: 1000, typicalBootMs: 10 }).initialIntervalMs).toBe(100);
  });
  it('ssh polling has bounded intervals', () => {
    expect(sshPolling({ pollIntervalMs: 60_000 }).maximumIntervalMs).toBe(10_000);
  });
  it('leak backoff doubles from the base and is capped at 30 minutes', () => {
    const t = withTuning();
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => leakDelayMs(t, n) / 60_000)).toEqual([1, 2, 4, 8, 16, 30, 30]);
  });

  describe('boot-aware delay (sparse, dense around the typical boot, then backing off)', () => {
    const cloud = { pollIntervalMs: 5_000, typicalBootMs: 60_000 };
    it('looks at the poll interval while the boot cannot be done, without overshooting the dense window', () => {
      expect(bootPollDelayMs(cloud, 0)).toBe(5_000);
      expect(bootPollDelayMs(cloud, 30_000)).toBe(5_000);
      expect(bootPollDelayMs(cloud, 33_000)).toBe(3_000); // lands on 0.6 × 60 s
      expect(bootPollDelayMs(cloud, 35_500)).toBe(DENSE_BOOT_POLL_MS); // never shorter than dense
    });
    it('is dense from 0.6× to 1.5× the typical boot', () => {
      for (const t of [36_000, 60_000, 90_000]) expect(bootPollDelayMs(cloud, t)).toBe(DENSE_BOOT_POLL_MS);
    });
    it('backs off linearly to the poll interval after the window, and stays there', () => {
      expect(bootPollDelayMs(cloud, 100_000)).toBe(4_000);
      expect(bootPollDelayMs(cloud, 120_000)).toBe(5_000);
      expect(bootPollDelayMs(cloud, 600_000)).toBe(5_000);
    });
    it('costs at most 30 observe calls per minute when the boot ends anywhere in the window', () => {
      for (const boot of [36_000, 60_000, 90_000]) {
        let t = 0;
        let calls = 1; // the first look, right after create
        while (t < boot) {
          t += bootPollDelayMs(cloud, t);
          calls += 1;
        }
        expect(calls / (t / 60_000)).toBeLessThanOrEqual(30);
        expect(t - boot).toBeLessThanOrEqual(DENSE_BOOT_POLL_MS);
      }
    });
    it('is never slower than the cloud poll interval nor faster than 100 ms', () => {
      const fast = { pollIntervalMs: 250, typicalBootMs: 500 };
      for (const t of [0, 100, 300, 500, 800, 5_000]) {
        expect(bootPollDelayMs(fast, t)).toBeLessThanOrEqual(250);
        expect(bootPollDelayMs(fast, t)).toBeGreaterThanOrEqual(100);
      }
      expect(bootPollDelayMs({ pollIntervalMs: 10, typicalBootMs: 0 }, 0)).toBe(100);
    });
  });
});
