/**
 * Makes sure a working `temporal` CLI is available (used by `.ci/run`); prints its path on stdout.
 * Same resolution as the CLI and the test harness: src/server/temporal-cli.ts.
 */
import { obtainTemporalCli } from '../src/server/temporal-cli';

obtainTemporalCli().then(
  (cli) => {
    process.stdout.write(`${cli.path}\n`);
    process.stderr.write(`gpuprov: temporal CLI (${cli.source}): ${cli.version}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
