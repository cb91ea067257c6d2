import { describe, expect, it } from 'vitest';
import { DEFAULT_WATCHER_TUNING } from '../../../src/core/watcher';
import { acceleratedWatcher, extrapolate, linearFit, pairsOf, parseScaleArgs, perShippedHour, perVmDay, ScaleFlagError } from '../../../bench/scale-model';
import { niceCeil, scaler, scaleSvg } from '../../../bench/scale-svg';

const SIX_HOURS = 6 * 3_600_000;

describe('the scale bench: accelerated idle window', () => {
  it('divides every watcher timing by the acceleration and keeps its counts', () => {
    const t = acceleratedWatcher(DEFAULT_WATCHER_TUNING, 60);
    expect(t).toMatchObject({
      readyIntervalMs: 333,
      fastIntervalMs: 83,
      quietWindowMs: 10_000,
      heartbeatTimeoutMs: 30_000, // 3 min / 60, floored: a look takes as long at any acceleration
      slowIntervalMs: 5_000,
      ledgerKeepMs: 60_000,
    });
    expect(t.keepSweeps).toBe(DEFAULT_WATCHER_TUNING.keepSweeps);
    expect(t.continueAsNewAfterEvents).toBe(DEFAULT_WATCHER_TUNING.continueAsNewAfterEvents);
    expect(acceleratedWatcher(DEFAULT_WATCHER_TUNING, 1e9).fastIntervalMs).toBe(1);
  });

  it('scales a count over the window to one VM-day at the shipped cadence', () => {
    // 6 real minutes at ×60 are 6 shipped hours: a day is 4 of them.
    expect(perVmDay(1_000, 6 * 60_000, 60, 1_000)).toBe(4);
    // One backstop check per VM in one 6-hour interval: 4 a day, whatever N.
    expect(perVmDay(100, 6 * 60_000, 60, 100)).toBe(4);
    expect(perVmDay(5, 0, 60, 10)).toBeNaN();
    expect(perShippedHour(600, 60_000, 60)).toBe(600);
  });
});

describe('the scale bench: linear extrapolation', () => {
  it('fits the least-squares line and reads it at 10,000', () => {
    expect(
      linearFit([
        [100, 10],
        [1_000, 100],
      ]),
    ).toEqual({ slope: 0.1, intercept: 0 });
    expect(
      extrapolate(
        [
          [100, 10],
          [1_000, 100],
        ],
        10_000,
      ),
    ).toBeCloseTo(1_000);
    // A flat cost stays flat.
    expect(
      extrapolate(
        [
          [100, 7],
          [1_000, 7],
          [5_000, 7],
        ],
        10_000,
      ),
    ).toBeCloseTo(7);
    // Three points near y = x/10 + 5: the least-squares line, about 1,005 at 10,000.
    expect(
      extrapolate(
        [
          [100, 14],
          [1_000, 106],
          [5_000, 505],
        ],
        10_000,
      ),
    ).toBeGreaterThan(990);
  });

  it('draws no line through fewer than two sizes', () => {
    expect(extrapolate([[1_000, 5]], 10_000)).toBeNaN();
    expect(
      extrapolate(
        [
          [1_000, 5],
          [1_000, 6],
        ],
        10_000,
      ),
    ).toBeNaN();
    expect(extrapolate([], 10_000)).toBeNaN();
  });
});

describe('the scale bench: flags', () => {
  it('defaults to 100 and 1,000 VMs, ×60, one backstop interval idle, 5 kills', () => {
    expect(parseScaleArgs([], SIX_HOURS)).toEqual({ sizes: [100, 1_000], spread: [], accel: 60, idleMs: 6 * 60_000, kills: 5 });
  });

  it('reads sizes, spreads, acceleration and the idle window', () => {
    const p = parseScaleArgs(['--sizes', '100,1000,5000', '--spread', '5000x50', '--accel', '120', '--idle-min', '1.5'], SIX_HOURS);
    expect(p).toEqual({ sizes: [100, 1_000, 5_000], spread: [{ vms: 5_000, pairs: 50 }], accel: 120, idleMs: 90_000, kills: 5 });
    expect(parseScaleArgs(['--spread', '5000x50'], SIX_HOURS).sizes).toEqual([]);
  });

  it('names the flag and the fix on bad input', () => {
    const bad = (argv: string[]): string => {
      try {
        parseScaleArgs(argv, SIX_HOURS);
      } catch (err) {
        expect(err).toBeInstanceOf(ScaleFlagError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad(['--sizes', '100,x'])).toMatch(/^--sizes: 'x'.*e\.g\. --sizes/);
    expect(bad(['--spread', '5000'])).toMatch(/^--spread: '5000' is not VMSxPAIRS/);
    expect(bad(['--spread', '10x50'])).toMatch(/^--spread: 50 pairs for 10 VMs/);
    expect(bad(['--sizes', '3', '--kills', '5'])).toMatch(/^--kills: 5 is more than the smallest size \(3\)/);
    expect(bad(['--idle-min', '0'])).toMatch(/^--idle-min/);
    expect(bad(['--accel'])).toMatch(/^--accel needs a value/);
  });

  it('spreads pairs over clouds of ten regions', () => {
    expect(pairsOf(1)).toEqual([{ cloud: 'scale', region: 'r0' }]);
    const fifty = pairsOf(50);
    expect(new Set(fifty.map((p) => `${p.cloud}/${p.region}`)).size).toBe(50);
    expect(new Set(fifty.map((p) => p.cloud))).toEqual(new Set(['scale0', 'scale1', 'scale2', 'scale3', 'scale4']));
  });
});

describe('the scale bench: the plot', () => {
  it('rounds an axis top to 1, 2, 2.5 or 5 × a power of ten', () => {
    expect([niceCeil(0.7), niceCeil(1), niceCeil(130), niceCeil(2_100), niceCeil(0)]).toEqual([1, 1, 200, 2_500, 1]);
  });

  it('maps 0 to the axes and the top to the plot area', () => {
    const sc = scaler(10_000, 100);
    expect(sc.x(10_000) - sc.x(0)).toBeGreaterThan(0);
    expect(sc.y(0)).toBeGreaterThan(sc.y(100));
    expect(sc.y(-5)).toBe(sc.y(0));
  });

  it('draws each measured point, a dashed fit with two sizes or more, the target, escaped text', () => {
    const svg = scaleSvg(
      [
        {
          title: 'RSS <at> Ready',
          unit: 'MB',
          target: 1_024,
          series: [
            {
              name: 'rss',
              color: '#000',
              points: [
                [100, 300],
                [1_000, 400],
              ],
            },
          ],
        },
        { title: 'one size', unit: 's', series: [{ name: 'wall', color: '#000', points: [[100, 3]] }] },
      ],
      { xMax: 10_000, caption: 'a & b' },
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<circle /g)).toHaveLength(3);
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(1);
    expect(svg).toContain('target 1k');
    expect(svg).toContain('RSS &lt;at&gt; Ready');
    expect(svg).toContain('a &amp; b');
    expect(svg).not.toContain('NaN');
  });
});
