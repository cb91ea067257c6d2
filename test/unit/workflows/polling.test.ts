import { describe, expect, it } from 'vitest';
import { bootPolling, gonePolling, sshPolling } from '../../../src/workflows/polling';
import { leakDelayMs, withTuning } from '../../../src/workflows/tuning';

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
  it('ssh and gone polling have bounded intervals', () => {
    expect(sshPolling({ pollIntervalMs: 60_000 }).maximumIntervalMs).toBe(10_000);
    expect(gonePolling({ pollIntervalMs: 1000 }).maximumIntervalMs).toBe(2000);
  });
  it('leak backoff doubles from the base and is capped at 30 minutes', () => {
    const t = withTuning();
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => leakDelayMs(t, n) / 60_000)).toEqual([1, 2, 4, 8, 16, 30, 30]);
  });
});
