import { GpuprovClient } from '../client';
import { currentDeployment } from '../deployment-record';
import { EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { vmNameArg } from '../args';
import { attemptsRows, duration, offerPrice, spendLine, table, where } from '../output';
import { spendSoFar } from '../../core/spend';
import { lossMessage } from '../../core/loss';
import { recoveryLine, retiringLine } from '../../core/recovery';
import { reservedLines } from '../../core/reserved-window';

export const statusCommand: Command = leaf({
  name: 'status',
  summary: 'show a VM: stage, location, endpoint, uptime, TTL, price, attempts',
  args: [vmNameArg('status')],
  flags: [],
  temporal: true,
  async run({ args, json }, io) {
    const name = args[0]!;
    const conn = await connectClient(io, { autoStart: false });
    const [s, deployment] = await Promise.all([new GpuprovClient(conn.client).status(name), currentDeployment(conn.client, io.env, conn.namespace)]);
    const now = Date.now();
    const spend = spendSoFar(s, now);
    if (json) {
      io.out(JSON.stringify({ ...s, spend, deployment }) + '\n');
      return EXIT_OK;
    }
    io.out(
      table([
        ['name', s.name],
        ['stage', s.stage],
        ['deployment', deployment],
        ['where', where(s) || '-'],
        ['price', offerPrice(s.offer)],
        ['spend', spendLine(spend, s.budget)],
        ['ssh', s.endpoint ? `${s.endpoint.user ?? 'root'}@${s.endpoint.host}:${s.endpoint.port}` : '-'],
        ['host key', s.hostKeyFingerprint ?? '-'],
        ['instances', s.instanceIds.join(', ') || '-'],
        ['uptime', s.readyAt ? duration((s.endedAt ? Date.parse(s.endedAt) : now) - Date.parse(s.readyAt)) : '-'],
        ['ttl', s.ttlExpiresAt ? `auto-down in ${duration(Date.parse(s.ttlExpiresAt) - now)}` : '-'],
        ['k3s', s.k8s?.note ?? '-'],
        ...(s.recovered
          ? [['recovered', recoveryLine(s.recovered)]]
          : s.spec.recover
            ? [['recovered', '0 times (--recover: a lost VM is launched again)']]
            : []),
        ...(s.lossCause ? [['lost', lossMessage(s.lossCause)]] : []),
        ...(s.retiring ? [['retiring', retiringLine(s.retiring)]] : []),
        ...reservedLines(s.reserved, s.stage).map((l) => ['reserved', l]),
        ...(s.leak
          ? [
              [
                'LEAKED',
                `${s.leak.location.cloud}/${s.leak.location.region} ${s.leak.instanceIds.join(',')}: ${s.leak.lastError}; retry ${s.leak.tries} (next ${s.leak.nextRetryAt ?? 'soon'})`,
              ],
            ]
          : []),
        ...(s.error ? [['error', `${s.error.kind}: ${s.error.message.split('\n')[0]}`]] : []),
      ]),
    );
    if (s.attempts.length) io.out(`\n${table(attemptsRows(s.attempts))}`);
    io.out(
      `\nnext: ${s.stage === 'ready' ? `ssh ${name}  |  npx provision down ${name}` : s.stage === 'leaked' ? `fix the cloud's problem, then: npx provision down ${name} (retries at once)` : `npx provision list`}\n`,
    );
    return EXIT_OK;
  },
});
