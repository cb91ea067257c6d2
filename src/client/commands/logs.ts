/** `provision logs NODE [-n N] [--follow]`: the bootstrap log of a fleet node, read over SSH. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../../core/errors';
import { tailCommand } from '../../fleet/remote';
import { stateDir } from '../../paths';
import { withSsh } from '../../ssh';
import type { SlotStatus } from '../../core/fleet-api';
import { GpuprovClient } from '../client';
import { checkFleetName, nodeArg, NODE_RE } from '../args';
import { EXIT_FAILED, EXIT_OK, type Command, type Io } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { show } from '../flags';
import { CommandFailure } from '../output';

/** Stream `command`'s stdout on the node to `io.out`, line by line, until it ends or Ctrl-C; resolves with its exit code. */
async function tailOverSsh(slot: SlotStatus, privateKey: string, command: string, io: Io): Promise<number> {
  const ep = slot.endpoint!;
  const target = { host: ep.host, port: ep.port, user: ep.user ?? 'root', ...(slot.hostKey ? { hostKey: slot.hostKey } : {}) };
  return withSsh(target, { privateKey }, async (s) => {
    let partial = '';
    const stop = new AbortController();
    const onSigint = (): void => stop.abort();
    process.once('SIGINT', onSigint);
    try {
      const r = await s.exec(command, {
        signal: stop.signal,
        onStdout: (d) => {
          const lines = (partial + d.toString('utf8')).split('\n');
          partial = lines.pop() ?? '';
          for (const l of lines) io.out(`${l}\n`);
        },
        onStderr: (d) => io.err(d.toString('utf8')),
      });
      return r.code ?? 0;
    } finally {
      process.removeListener('SIGINT', onSigint);
      if (partial) io.out(`${partial}\n`);
    }
  });
}

export const logsCommand: Command = leaf({
  name: 'logs',
  summary: "show a fleet node's bootstrap log (stdout/stderr of its start command, with sequence numbers)",
  args: [nodeArg],
  flags: [
    {
      name: 'lines',
      short: 'n',
      type: 'string',
      value: 'N',
      meaning: 'how many of the last lines to show first',
      format: 'a whole number, 0 or more',
      default: '100',
      example: '-n 200',
    },
    {
      name: 'follow',
      short: 'f',
      type: 'boolean',
      meaning: 'keep printing new lines until Ctrl-C',
      default: 'off: print and exit',
      example: '--follow',
    },
    {
      name: 'fleet',
      type: 'string',
      value: 'FLEET',
      meaning: "the node's fleet, when its name does not start with it",
      format: 'a fleet name',
      default: 'the part of NODE before -<group>-<index>',
      example: '--fleet train',
    },
    {
      name: 'identity',
      short: 'i',
      type: 'string',
      value: 'FILE',
      meaning: "the worker's SSH private key (the log is read as the worker, which owns the node)",
      format: 'a private key file',
      default: "GPUPROV_SSH_KEY_FILE, else the key of this host's worker (<state dir>/keys/id_ed25519)",
      example: '-i ~/.config/gpuprov/worker-key',
    },
  ],
  notes: 'Lines are "<stream> <seq> <time> <text>". Run it where the worker runs, or pass the worker\'s key with -i.',
  temporal: true,
  async run({ args, values, json }, io) {
    const node = args[0]!;
    const lines = values.lines === undefined ? 100 : Number(values.lines);
    if (!/^\d+$/.test(values.lines ?? '0') || !Number.isSafeInteger(lines))
      throw new InputError('--lines', `${show(values.lines ?? '')} is not a line count`, 'e.g. -n 200');
    const fleet = values.fleet === undefined ? NODE_RE.exec(node)![1]! : checkFleetName('--fleet', values.fleet, 'logs train-work-0 --fleet');
    // The worker's key: the deployment key when one is set, else the one this host's worker made.
    const keyPath = values.identity ?? (io.env.GPUPROV_SSH_KEY_FILE || join(stateDir(io.env), 'keys', 'id_ed25519'));
    const privateKey = await readFile(keyPath, 'utf8').catch(() => {
      throw new InputError(
        values.identity ? '--identity' : 'GPUPROV_SSH_KEY_FILE',
        `cannot read the SSH key ${keyPath}`,
        "run this where the worker runs, or pass the worker's key with -i",
      );
    });
    const { client } = await connectClient(io, { autoStart: true });
    const slot = await new GpuprovClient(client).fleet.node(fleet, node);
    if (!slot) throw new CommandFailure(`fleet ${fleet} has no node ${node}`, `see npx provision fleet status ${fleet}`);
    if (!slot.bootstrap) throw new CommandFailure(`${node} has no bootstrap, so no log`, 'add a bootstrap to its group');
    if (!slot.endpoint) throw new CommandFailure(`${node} has no SSH endpoint yet (stage ${slot.stage})`, 'wait until its VM is up');
    if (!json) io.err(`${node} (attempt ${slot.attempt}): ${slot.bootstrap.logPath} — lines are "<stream> <seq> <time> <text>"\n`);
    const code = await tailOverSsh(slot, privateKey, tailCommand(slot.bootstrap.logPath, lines, values.follow === true), io);
    return code === 0 ? EXIT_OK : EXIT_FAILED;
  },
});
