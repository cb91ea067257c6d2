/**
 * The CLI in-process against the run's dev server and a test worker's task queue: what a user
 * would type, with stdout, stderr and the exit code captured.
 */
import { runCli } from '../../src/client/cli';
import type { Io } from '../../src/client/command';
import { testEnv } from './temporal';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs `provision ARGS` with HOME at `home` and the worker's task queue. */
export async function runTestCli(home: string, taskQueue: string, args: string[]): Promise<CliResult> {
  const o = { out: '', err: '' };
  const io: Io = {
    out: (s) => void (o.out += s),
    err: (s) => void (o.err += s),
    isTTY: false,
    env: {
      HOME: home,
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: testEnv().address,
      TEMPORAL_NAMESPACE: testEnv().namespace,
      GPUPROV_TASK_QUEUE: taskQueue,
    },
  };
  const code = await runCli(args, io);
  return { code, ...o };
}
