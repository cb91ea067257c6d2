import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { EXIT_FAILED, type Command } from '../command';
import { leaf } from '../define';
import { vmNameArg } from '../args';
import { CommandFailure } from '../output';
import { sshPaths } from '../user-files';

export const sshCommand: Command = leaf({
  name: 'ssh',
  summary: 'ssh into a VM with the entry gpuprov wrote (same as plain `ssh NAME`)',
  args: [vmNameArg('ssh')],
  rest: { name: 'COMMAND…', meaning: 'a command to run on the VM instead of a login shell (passed to ssh as is)', example: 'provision ssh gpu1 -- nvidia-smi' },
  flags: [],
  async run({ args, rest }, io) {
    const name = args[0]!;
    const entry = sshPaths(io.env).entry(name);
    if (!existsSync(entry))
      throw new CommandFailure(`no ssh entry for ${name}`, `npx provision start --name ${name} (re-running start attaches and writes it)`);
    const child = spawn('ssh', ['-F', entry, name, ...rest], { stdio: 'inherit', env: io.env });
    return await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? EXIT_FAILED)));
  },
});
