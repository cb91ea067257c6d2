/**
 * CheckBootInstall: what one SSH round trip saw on the VM, and the pure decision table that
 * maps it to `installed | wait | push`. No I/O, no Temporal import: workflows call `decideBoot`.
 */

export type MarkerState = 'absent' | 'running' | 'done' | 'failed';
export type CloudInitState = 'running' | 'done' | 'error' | 'disabled' | 'absent' | 'unknown';

/** The VM as the boot probe saw it. */
export interface BootProbe {
  /** `/var/lib/gpuprov/k3s-install.status`. */
  marker: MarkerState;
  /** The marker's `gpu=1`: the installer set up the NVIDIA runtime and device plugin. */
  markerGpu: boolean;
  /** Someone holds the installer's host-wide flock (an install is really in progress). */
  lockHeld: boolean;
  cloudInit: CloudInitState;
  /** `systemctl is-active k3s` said `active`. */
  unitActive: boolean;
  /** `nvidia-smi -L` works on the host. */
  gpuPresent: boolean;
}

export interface BootContext {
  /** The installer was delivered as this VM's boot script (false: no boot hook, or a reused VM). */
  bootRoute: boolean;
  /** Time spent in CheckBootInstall so far. */
  waitedMs: number;
  /** Longest wait for a boot install (15 min by default). */
  maxWaitMs: number;
}

export type PushReason = 'no-boot-route' | 'boot-failed' | 'timed-out' | 'gpu-missed' | 'k3s-not-running' | 'installer-died' | 'boot-skipped';

export type BootDecision = { action: 'installed' } | { action: 'wait'; reason: string } | { action: 'push'; reason: PushReason };

/** Default upper bound of the wait for a boot-time install. */
export const BOOT_INSTALL_MAX_WAIT_MS = 15 * 60_000;

/**
 * The decision table, first matching row wins:
 *
 * | # | marker  | other conditions                         | decision                 |
 * |---|---------|------------------------------------------|--------------------------|
 * | 1 | done    | GPU present, marker says no GPU setup    | push (gpu-missed)        |
 * | 2 | done    | k3s unit not active                      | push (k3s-not-running)   |
 * | 3 | done    | —                                        | installed                |
 * | 4 | failed  | —                                        | push (boot-failed)       |
 * | 5 | running | lock free (the installer died)           | push (installer-died)    |
 * | 6 | running | waited ≥ max                             | push (timed-out)         |
 * | 7 | running | —                                        | wait                     |
 * | 8 | absent  | no boot route (no hook, reused VM)       | push (no-boot-route)     |
 * | 9 | absent  | waited ≥ max                             | push (timed-out)         |
 * |10 | absent  | cloud-init finished (done/error/disabled)| push (boot-skipped)      |
 * |11 | absent  | cloud-init running / unknown / absent    | wait                     |
 */
export function decideBoot(p: BootProbe, c: BootContext): BootDecision {
  const timedOut = c.waitedMs >= c.maxWaitMs;
  switch (p.marker) {
    case 'done':
      if (p.gpuPresent && !p.markerGpu) return { action: 'push', reason: 'gpu-missed' };
      if (!p.unitActive) return { action: 'push', reason: 'k3s-not-running' };
      return { action: 'installed' };
    case 'failed':
      return { action: 'push', reason: 'boot-failed' };
    case 'running':
      if (!p.lockHeld) return { action: 'push', reason: 'installer-died' };
      if (timedOut) return { action: 'push', reason: 'timed-out' };
      return { action: 'wait', reason: 'boot install running' };
    case 'absent':
      if (!c.bootRoute) return { action: 'push', reason: 'no-boot-route' };
      if (timedOut) return { action: 'push', reason: 'timed-out' };
      if (p.cloudInit === 'done' || p.cloudInit === 'error' || p.cloudInit === 'disabled') return { action: 'push', reason: 'boot-skipped' };
      return { action: 'wait', reason: `boot script not started yet (cloud-init ${p.cloudInit})` };
  }
}

/** A push after these reasons must take over a lock a hung boot install still holds. */
export function pushTakesOver(reason: PushReason): boolean {
  return reason === 'timed-out';
}

function cloudInitOf(raw: string | undefined): CloudInitState {
  if (raw === undefined || raw === '' || raw === 'absent') return raw === 'absent' ? 'absent' : 'unknown';
  if (raw.startsWith('running') || raw === 'not started' || raw === 'not run') return 'running';
  if (raw === 'done' || raw === 'degraded done') return 'done';
  if (raw.startsWith('error') || raw.startsWith('degraded')) return 'error';
  if (raw === 'disabled') return 'disabled';
  return 'unknown';
}

/** Parse the `key=value` lines printed by the remote probe script (see `remote.ts`). */
export function parseBootProbe(text: string): BootProbe {
  const kv = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) kv.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  if (kv.get('probe') !== '1') throw new Error(`boot probe printed no result: ${text.slice(0, 200)}`);
  const state = kv.get('marker.state');
  const marker: MarkerState = state === 'running' || state === 'done' || state === 'failed' ? state : 'absent';
  return {
    marker,
    markerGpu: kv.get('marker.gpu') === '1',
    lockHeld: kv.get('lock') === 'held',
    cloudInit: cloudInitOf(kv.get('cloud_init')),
    unitActive: kv.get('unit') === 'active',
    gpuPresent: kv.get('gpu') === '1',
  };
}
