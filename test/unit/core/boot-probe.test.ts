import { describe, expect, it } from 'vitest';
import { decideBoot, parseBootProbe, pushTakesOver, type BootContext, type BootProbe } from '../../../src/core/boot-probe';

const MAX = 15 * 60_000;
const probe = (p: Partial<BootProbe> = {}): BootProbe => ({
  marker: 'absent',
  markerGpu: false,
  lockHeld: false,
  cloudInit: 'running',
  unitActive: false,
  gpuPresent: false,
  ...p,
});
const ctx = (c: Partial<BootContext> = {}): BootContext => ({ bootRoute: true, waitedMs: 0, maxWaitMs: MAX, ...c });

describe('boot-probe decision table (one case per row)', () => {
  const rows: [string, BootProbe, BootContext, ReturnType<typeof decideBoot>][] = [
    [
      '1 done, GPU present but not set up → push gpu-missed',
      probe({ marker: 'done', unitActive: true, gpuPresent: true, markerGpu: false }),
      ctx(),
      { action: 'push', reason: 'gpu-missed' },
    ],
    ['2 done, k3s unit not active → push k3s-not-running', probe({ marker: 'done', unitActive: false }), ctx(), { action: 'push', reason: 'k3s-not-running' }],
    ['3 done, unit active, no GPU → installed', probe({ marker: 'done', unitActive: true }), ctx(), { action: 'installed' }],
    [
      '3 done, unit active, GPU set up → installed',
      probe({ marker: 'done', unitActive: true, gpuPresent: true, markerGpu: true }),
      ctx(),
      { action: 'installed' },
    ],
    ['4 failed → push boot-failed', probe({ marker: 'failed' }), ctx(), { action: 'push', reason: 'boot-failed' }],
    ['5 running, lock free → push installer-died', probe({ marker: 'running', lockHeld: false }), ctx(), { action: 'push', reason: 'installer-died' }],
    [
      '6 running, lock held, waited ≥ max → push timed-out',
      probe({ marker: 'running', lockHeld: true }),
      ctx({ waitedMs: MAX }),
      { action: 'push', reason: 'timed-out' },
    ],
    [
      '7 running, lock held, within max → wait',
      probe({ marker: 'running', lockHeld: true }),
      ctx({ waitedMs: MAX - 1 }),
      { action: 'wait', reason: 'boot install running' },
    ],
    ['8 absent, no boot route → push no-boot-route', probe({ cloudInit: 'running' }), ctx({ bootRoute: false }), { action: 'push', reason: 'no-boot-route' }],
    [
      '9 absent, boot route, waited ≥ max → push timed-out',
      probe({ cloudInit: 'running' }),
      ctx({ waitedMs: MAX + 1 }),
      { action: 'push', reason: 'timed-out' },
    ],
    ['10 absent, cloud-init done → push boot-skipped', probe({ cloudInit: 'done' }), ctx(), { action: 'push', reason: 'boot-skipped' }],
    ['10 absent, cloud-init error → push boot-skipped', probe({ cloudInit: 'error' }), ctx(), { action: 'push', reason: 'boot-skipped' }],
    ['10 absent, cloud-init disabled → push boot-skipped', probe({ cloudInit: 'disabled' }), ctx(), { action: 'push', reason: 'boot-skipped' }],
    [
      '11 absent, cloud-init running → wait',
      probe({ cloudInit: 'running' }),
      ctx(),
      { action: 'wait', reason: 'boot script not started yet (cloud-init running)' },
    ],
    [
      '11 absent, no cloud-init (vendor hook) → wait',
      probe({ cloudInit: 'absent' }),
      ctx(),
      { action: 'wait', reason: 'boot script not started yet (cloud-init absent)' },
    ],
    [
      '11 absent, cloud-init unknown → wait',
      probe({ cloudInit: 'unknown' }),
      ctx(),
      { action: 'wait', reason: 'boot script not started yet (cloud-init unknown)' },
    ],
  ];
  it.each(rows)('%s', (_name, p, c, want) => {
    expect(decideBoot(p, c)).toEqual(want);
  });

  it('row order: a done marker wins over an expired wait and a missing boot route', () => {
    expect(decideBoot(probe({ marker: 'done', unitActive: true }), ctx({ bootRoute: false, waitedMs: MAX * 2 }))).toEqual({ action: 'installed' });
  });

  it('only a timed-out push takes over the lock', () => {
    expect(pushTakesOver('timed-out')).toBe(true);
    for (const r of ['no-boot-route', 'boot-failed', 'gpu-missed', 'k3s-not-running', 'installer-died', 'boot-skipped'] as const)
      expect(pushTakesOver(r)).toBe(false);
  });
});

describe('parseBootProbe', () => {
  it('reads the marker, lock, cloud-init, unit and GPU lines', () => {
    const text = ['probe=1', 'marker.state=done', 'marker.gpu=1', 'marker.sans=1.2.3.4', 'lock=free', 'cloud_init=done', 'unit=active', 'gpu=1', ''].join('\n');
    expect(parseBootProbe(text)).toEqual({ marker: 'done', markerGpu: true, lockHeld: false, cloudInit: 'done', unitActive: true, gpuPresent: true });
  });
  it('no marker, cloud-init still running, unit inactive', () => {
    const p = parseBootProbe('probe=1\nmarker.state=absent\nlock=held\ncloud_init=running\nunit=inactive\ngpu=0\n');
    expect(p).toEqual({ marker: 'absent', markerGpu: false, lockHeld: true, cloudInit: 'running', unitActive: false, gpuPresent: false });
  });
  it.each([
    ['not started', 'running'],
    ['degraded done', 'done'],
    ['error', 'error'],
    ['disabled', 'disabled'],
    ['absent', 'absent'],
    ['', 'unknown'],
    ['weird', 'unknown'],
  ])('cloud-init "%s" → %s', (raw, want) => {
    expect(parseBootProbe(`probe=1\ncloud_init=${raw}\n`).cloudInit).toBe(want);
  });
  it('an unknown marker state counts as absent', () => {
    expect(parseBootProbe('probe=1\nmarker.state=bogus\n').marker).toBe('absent');
  });
  it('rejects output that is not the probe (e.g. a login banner only)', () => {
    expect(() => parseBootProbe('Welcome to Ubuntu\n')).toThrow(/no result/);
  });
});
