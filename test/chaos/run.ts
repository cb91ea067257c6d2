/**
 * `npm run chaos -- --level fake|local --seeds N [--seed S] [--lanes L] [--server-restarts R]
 *  [--broken] [--trace '<json>'] [--no-shrink] [--quiet]`; lanes default to 12 (fake) or 4 (local),
 *  at most two per core.
 *
 * Prints ONE JSON line `{level, seeds, invariants, violations, leaks, orphansLeft, foreignDeletions,
 * failures, lostMaxMs, lostP50Ms, preemptions, preemptionsWithNotice, preemptedReadyAgain,
 * preemptedLost, preemptedRelaunchFailed, duplicates, kills, restarts, serverRestarts, wallMs}` on stdout,
 * `failures` one `{seed, invariant, detail, replay}` per violation; on a violation also the
 * shrunk trace and its replay (stderr), and exits 1. Progress goes to stderr.
 */
import { availableParallelism } from 'node:os';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { runKit, type KitOptions } from './kit';
import type { Level, Trace } from './trace';

function parse(argv: string[]): KitOptions & { quiet: boolean } {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const given = get('--level') ?? 'fake';
  if (given !== 'fake' && given !== 'local') throw new Error(`--level must be fake or local, not ${given}`);
  const level: Level = given;
  const seed = get('--seed');
  const n = Number(get('--seeds') ?? (seed ? 1 : 8));
  const seeds = seed !== undefined ? [Number(seed)] : Array.from({ length: n }, (_, i) => i + 1);
  const trace = get('--trace');
  const traces = trace ? [JSON.parse(trace) as Trace] : undefined;
  const count = traces?.length ?? seeds.length;
  // Lanes share the machine with two dev servers and the workers: past ~2 a core, the invariants'
  // time allowances (a loss within a cycle, a sweep within the grace) measure the machine, not the product.
  const lanes = Number(get('--lanes') ?? Math.min(count, level === 'fake' ? 12 : 4, 2 * availableParallelism()));
  const serverRestarts = Number(get('--server-restarts') ?? (count >= 4 ? Math.min(3, Math.floor(count / 4)) : 0));
  return {
    level,
    ...(traces ? { traces } : { seeds }),
    lanes,
    serverRestarts,
    broken: argv.includes('--broken'),
    shrink: !argv.includes('--no-shrink'),
    quiet: argv.includes('--quiet'),
  };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const opts = parse(process.argv.slice(2));
  const report = await runKit({ ...opts, log: opts.quiet ? undefined : (l) => process.stderr.write(`chaos: ${l}\n`) });
  process.stdout.write(`${JSON.stringify(report.summary)}\n`);
  for (const f of report.failures) {
    process.stderr.write(`\nseed ${f.seed}: ${f.violations.length} violation(s)\n`);
    for (const v of f.violations.slice(0, 10)) process.stderr.write(`  [${v.invariant}] ${v.vm ?? ''} ${v.detail}\n`);
    if (f.shrunk) {
      process.stderr.write(`  shrunk trace: ${JSON.stringify(f.shrunk)}\n`);
      for (const v of (f.shrunkViolations ?? []).slice(0, 5)) process.stderr.write(`    [${v.invariant}] ${v.vm ?? ''} ${v.detail}\n`);
    }
    process.stderr.write(`  replay: ${f.replay}\n`);
  }
  process.exitCode = report.summary.violations > 0 ? 1 : 0;
}

// Ctrl-C / SIGTERM: exit through 'exit' so the worker processes and the dev server are killed too.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

main().then(
  () => process.exit(),
  (err: unknown) => {
    process.stderr.write(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
