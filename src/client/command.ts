/** What a command may touch: its output streams and environment (tests pass fakes). */
export interface Io {
  out(s: string): void;
  err(s: string): void;
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
}

/** One CLI command. Exit codes: 0 ok, 1 failed, 2 bad input. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], io: Io): Promise<number>;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_BAD_INPUT = 2;

/** Write one line (adds the newline) to stdout / stderr. */
export const outLine = (io: Io, s: string): void => io.out(s.endsWith('\n') ? s : `${s}\n`);
export const errLine = (io: Io, s: string): void => io.err(s.endsWith('\n') ? s : `${s}\n`);
