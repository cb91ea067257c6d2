/** `provision logs NODE [-n N] [--follow]`: the bootstrap log of a fleet node, read over SSH. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../../core/errors';
import { tailCommand } from '../../fleet/remote';
import { stateDir } from '../../paths';
import { withSsh } from '../../ssh';
import type { SlotStatus } from '../../core/fleet-api';
import { GpuprovClient } from '../client';
import { EXIT_FAILED, EXIT_OK, type Command, type Io } from '../command';
import { connectClient } from '../connect';
import { parseFlags } from '../options';
import { reportError } from '../output';

const NODE_RE = /^([a-z](?:[a-z0-9-]*[a-z0-9])?)-([a-z][a-z0-9]*)-(\d+)$/;

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

async function run(args: string[], io: Io): Promise<number> {
  const json = args.includes('--json');
  try {
    const { positionals, values } = parseFlags(args, {
      lines: { type: 'string', short: 'n' },
      follow: { type: 'boolean', short: 'f' },
      fleet: { type: 'string' },
      identity: { type: 'string', short: 'i' },
      json: { type: 'boolean' },
    }, 1);
    const node = positionals[0];
    const m = node ? NODE_RE.exec(node) : null;
    if (!node || !m) throw new InputError('NODE', `"${node ?? ''}" is not a fleet node name`, 'give <fleet>-<group>-<index>, e.g. provision logs train-work-0');
    const lines = values.lines === undefined ? 100 : Number(values.lines);
    if (!Number.isInteger(lines) || lines < 0) throw new InputError('--lines', `"${String(values.lines)}" is not a line count`, 'e.g. -n 200');
    const fleet = typeof values.fleet === 'string' ? values.fleet : m[1]!;
    const { client } = await connectClient(io, { autoStart: true });
    const slot = await new GpuprovClient(client).fleet.node(fleet, node);
    if (!slot) throw new InputError('NODE', `fleet ${fleet} has no node ${node}`, `see npx provision fleet status ${fleet}`);
    if (!slot.bootstrap) throw new InputError('NODE', `${node} has no bootstrap, so no log`, 'add a bootstrap to its group');
    if (!slot.endpoint) throw new InputError('NODE', `${node} has no SSH endpoint yet (stage ${slot.stage})`, 'wait until its VM is up');
    // The worker's key: the deployment key when one is set, else the one this host's worker made.
    const keyPath = typeof values.identity === 'string' ? values.identity : io.env.GPUPROV_SSH_KEY_FILE || join(stateDir(io.env), 'keys', 'id_ed25519');
    const privateKey = await readFile(keyPath, 'utf8').catch(() => {
      throw new InputError('--identity', `cannot read the SSH key ${keyPath}`, "run this where the worker runs, or pass the worker's key with -i");
    });
    if (!json) io.err(`${node} (attempt ${slot.attempt}): ${slot.bootstrap.logPath} — lines are "<stream> <seq> <time> <text>"\n`);
    const code = await tailOverSsh(slot, privateKey, tailCommand(slot.bootstrap.logPath, lines, values.follow === true), io);
    return code === 0 ? EXIT_OK : EXIT_FAILED;
  } catch (err) {
    return reportError(io, err, json);
  }
}

export const logsCommand: Command = {
  name: 'logs',
  summary: "show a fleet node's bootstrap log (stdout/stderr of its start command, with sequence numbers)",
  usage: 'provision logs NODE [-n LINES] [--follow] [--fleet FLEET] [-i KEY]',
  run,
};
