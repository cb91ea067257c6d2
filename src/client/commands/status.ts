import { nameSchema, parseFlags } from '../options';
import { GpuprovClient } from '../client';
import { EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { attemptsRows, duration, price, reportError, table, where } from '../output';
import { InputError } from '../../core/errors';

export function nameArg(positionals: string[], command: string): string {
  const raw = positionals[0];
  const r = nameSchema.safeParse(raw);
  if (!r.success) throw new InputError('NAME', `${raw === undefined ? 'missing VM name' : `"${raw}" is not a VM name`}`, `usage: npx provision ${command} NAME (e.g. gpu1)`);
  return r.data;
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'show a VM: stage, location, endpoint, uptime, TTL, price, attempts',
  usage: 'provision status NAME [--json]',
  async run(args, io) {
    const json = args.includes('--json');
    try {
      const { positionals } = parseFlags(args, { json: { type: 'boolean' } }, 1);
      const name = nameArg(positionals, 'status');
      const conn = await connectClient(io, { autoStart: false });
      const s = await new GpuprovClient(conn.client).status(name);
      if (json) {
        io.out(JSON.stringify(s) + '\n');
        return EXIT_OK;
      }
      const now = Date.now();
      io.out(
        table([
          ['name', s.name], ['stage', s.stage], ['where', where(s) || '-'], ['price', price(s.offer?.pricePerHour)],
          ['ssh', s.endpoint ? `${s.endpoint.user ?? 'root'}@${s.endpoint.host}:${s.endpoint.port}` : '-'],
          ['host key', s.hostKeyFingerprint ?? '-'], ['instances', s.instanceIds.join(', ') || '-'],
          ['uptime', s.readyAt ? duration((s.endedAt ? Date.parse(s.endedAt) : now) - Date.parse(s.readyAt)) : '-'],
          ['ttl', s.ttlExpiresAt ? `auto-down in ${duration(Date.parse(s.ttlExpiresAt) - now)}` : '-'],
          ['k3s', s.k8s?.note ?? '-'],
          ...(s.leak ? [['LEAKED', `${s.leak.location.cloud}/${s.leak.location.region} ${s.leak.instanceIds.join(',')}: ${s.leak.lastError}; retry ${s.leak.tries} (next ${s.leak.nextRetryAt ?? 'soon'})`]] : []),
          ...(s.error ? [['error', `${s.error.kind}: ${s.error.message.split('\n')[0]}`]] : []),
        ]),
      );
      if (s.attempts.length) io.out(`\n${table(attemptsRows(s.attempts))}`);
      io.out(`\nnext: ${s.stage === 'ready' ? `ssh ${name}  |  npx provision down ${name}` : s.stage === 'leaked' ? `fix the cloud's problem, then: npx provision down ${name} (retries at once)` : `npx provision list`}\n`);
      return EXIT_OK;
    } catch (err) {
      return reportError(io, err, json);
    }
  },
};
