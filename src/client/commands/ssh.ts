import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { EXIT_FAILED, type Command } from '../command';
import { reportError } from '../output';
import { sshPaths } from '../user-files';
import { nameArg } from './status';

export const sshCommand: Command = {
  name: 'ssh',
  summary: 'ssh into a VM with the entry gpuprov wrote (same as plain `ssh NAME`)',
  usage: 'provision ssh NAME [-- command …]',
  async run(args, io) {
    try {
      const dash = args.indexOf('--');
      const name = nameArg(dash >= 0 ? args.slice(0, dash) : args.slice(0, 1), 'ssh');
      const entry = sshPaths(io.env).entry(name);
      if (!existsSync(entry)) {
        io.err(`error: no ssh entry for ${name}\n  next: npx provision start --name ${name} (re-running start attaches and writes it)\n`);
        return EXIT_FAILED;
      }
      const rest = dash >= 0 ? args.slice(dash + 1) : args.slice(1);
      const child = spawn('ssh', ['-F', entry, name, ...rest], { stdio: 'inherit', env: io.env });
      return await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? EXIT_FAILED)));
    } catch (err) {
      return reportError(io, err, false);
    }
  },
};
