import type { FlagSpec } from './flags';

/** What a command may touch: its output streams and environment (tests pass fakes). */
export interface Io {
  out(s: string): void;
  err(s: string): void;
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
}

/** One CLI command (built by `leaf` or `group` in ./define.ts). Exit codes: 0 ok, 1 failed, 2 bad input. */
export interface Command {
  name: string;
  summary: string;
  /** One line: `provision start [NAME] [flags]`. */
  usage: string;
  /** The full `--help` page, generated from the command's flag table. */
  help(): string;
  /** Parses `args` (everything after the command's name), runs, and reports any error itself. */
  run(args: string[], io: Io): Promise<number>;
  /** Its flags (leaf commands), for help tests. */
  flags?: readonly FlagSpec[];
  /** Its subcommands (`fleet`, `server`). */
  subcommands?: readonly Command[];
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_BAD_INPUT = 2;

/** Write one line (adds the newline) to stdout / stderr. */
export const outLine = (io: Io, s: string): void => io.out(s.endsWith('\n') ? s : `${s}\n`);
export const errLine = (io: Io, s: string): void => io.err(s.endsWith('\n') ? s : `${s}\n`);
