import { parseFlags } from '../options';
import { GpuprovClient } from '../client';
import { EXIT_FAILED, EXIT_OK, type Command, type Io } from '../command';
import { connectClient } from '../connect';
import { follow } from '../follow';
import { reportError } from '../output';
import { removeSshEntry } from '../user-files';
import { nameArg } from './status';

/** Signal teardown or cancel, then wait until nothing is billed and remove the ssh entry. */
async function stop(kind: 'down' | 'cancel', args: string[], io: Io): Promise<number> {
  const json = args.includes('--json');
  try {
    const { positionals, values } = parseFlags(args, { json: { type: 'boolean' }, detach: { type: 'boolean' } }, 1);
    const name = nameArg(positionals, kind);
    const conn = await connectClient(io, { autoStart: false });
    const client = new GpuprovClient(conn.client);
    const before = await client.status(name);
    if (before.endedAt !== undefined) {
      // Already ended (the status of a closed workflow still answers): nothing to do, and that is success.
      await removeSshEntry(io.env, name);
      if (json) io.out(JSON.stringify({ ok: true, alreadyGone: true, status: before }) + '\n');
      else io.out(`${name} is already gone (${before.stage} at ${before.endedAt}); nothing is billed. next: npx provision list --all\n`);
      return EXIT_OK;
    }
    const handle = kind === 'down' ? await client.teardown(name) : await client.cancel(name);
    if (!json) io.err(`${kind === 'down' ? 'Tearing down' : 'Cancelling'} ${name} (was ${before.stage})…\n`);
    if (values.detach) {
      if (json) io.out(JSON.stringify({ ok: true, name, signalled: kind }) + '\n');
      return EXIT_OK;
    }
    const s = await follow(client, io, name, json, ['terminated', 'cancelled', 'lost', 'failed', 'leaked']);
    if (s?.stage === 'leaked') {
      if (json) io.out(JSON.stringify({ ok: false, status: s }) + '\n');
      else io.err(`${name} could not be torn down yet and is LEAKED (still retrying): ${s.leak?.lastError ?? ''}\nnext: fix the cloud's problem, then run: npx provision down ${name}\n`);
      return EXIT_FAILED;
    }
    await handle.result().catch(() => undefined);
    await removeSshEntry(io.env, name);
    if (json) io.out(JSON.stringify({ ok: true, status: s ?? null }) + '\n');
    else io.out(`${name} is gone (${s?.stage ?? 'ended'}); nothing is billed. next: npx provision list\n`);
    return EXIT_OK;
  } catch (err) {
    return reportError(io, err, json);
  }
}

export const downCommand: Command = {
  name: 'down',
  summary: 'tear a VM down and wait until nothing is billed (also retries a leaked teardown)',
  usage: 'provision down NAME [--detach] [--json]',
  run: (args, io) => stop('down', args, io),
};

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'stop a launch in flight; everything it created is deleted',
  usage: 'provision cancel NAME [--detach] [--json]',
  run: (args, io) => stop('cancel', args, io),
};
