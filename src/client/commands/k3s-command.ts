import { K3sAccessError } from '../k3s-access';
import type { Command, Io } from '../command';
import { errLine } from '../command';

/** A k3s access command: a K3sAccessError prints its message and exits with its code. */
export function k3sCommand(name: string, summary: string, usage: string, run: (args: string[], io: Io) => Promise<number>): Command {
  return {
    name,
    summary,
    usage,
    async run(args, io) {
      try {
        return await run(args, io);
      } catch (err) {
        if (err instanceof K3sAccessError) {
          errLine(io, err.message);
          return err.exitCode;
        }
        throw err;
      }
    },
  };
}
