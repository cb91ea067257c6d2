import { GpuprovClient } from '../client';
import { EXIT_FAILED, EXIT_OK, type Command, type Io } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import type { FlagSpec } from '../flags';
import { follow } from '../follow';
import { vmNameArg } from '../args';
import { removeSshEntry } from '../user-files';

const DETACH = {
  name: 'detach',
  type: 'boolean',
  meaning: 'return once the request is sent instead of waiting until nothing is billed',
  default: 'off: wait until every instance is gone',
  example: '--detach',
} as const satisfies FlagSpec;

/** Signal teardown or cancel, then wait until nothing is billed and remove the ssh entry. */
async function stop(kind: 'down' | 'cancel', name: string, detach: boolean, json: boolean, io: Io): Promise<number> {
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
  if (detach) {
    if (json) io.out(JSON.stringify({ ok: true, name, signalled: kind }) + '\n');
    return EXIT_OK;
  }
  const s = await follow(client, io, name, json, ['terminated', 'cancelled', 'lost', 'failed', 'leaked']);
  if (s?.stage === 'leaked') {
    if (json) io.out(JSON.stringify({ ok: false, status: s }) + '\n');
    else
      io.err(
        `${name} could not be torn down yet and is LEAKED (still retrying): ${s.leak?.lastError ?? ''}\nnext: fix the cloud's problem, then run: npx provision down ${name}\n`,
      );
    return EXIT_FAILED;
  }
  await handle.result().catch(() => undefined);
  await removeSshEntry(io.env, name);
  if (json) io.out(JSON.stringify({ ok: true, status: s ?? null }) + '\n');
  else io.out(`${name} is gone (${s?.stage ?? 'ended'}); nothing is billed. next: npx provision list\n`);
  return EXIT_OK;
}

export const downCommand: Command = leaf({
  name: 'down',
  summary: 'tear a VM down and wait until nothing is billed (also retries a leaked teardown)',
  args: [vmNameArg('down')],
  flags: [DETACH],
  notes: 'A VM that already ended is reported as gone (exit 0). Its ssh entry is removed.',
  temporal: true,
  run: ({ args, values, json }, io) => stop('down', args[0]!, values.detach === true, json, io),
});

export const cancelCommand: Command = leaf({
  name: 'cancel',
  summary: 'stop a launch in flight; everything it created is deleted',
  args: [vmNameArg('cancel')],
  flags: [DETACH],
  temporal: true,
  run: ({ args, values, json }, io) => stop('cancel', args[0]!, values.detach === true, json, io),
});
