import { GpuprovClient } from '../client';
import { EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { table } from '../output';
import { currentDeployment } from '../deployment-record';
import { watcherStates, withOrphans } from '../watchers';
import { unknownAdvice } from './sweep';

export const listCommand: Command = leaf({
  name: 'list',
  summary: 'every VM of this deployment (incl. leaked and lost); --all adds finished ones',
  flags: [
    {
      name: 'all',
      type: 'boolean',
      meaning: 'also list VMs whose workflow has ended (terminated, cancelled, failed), and orphans: instances the account watchers will delete',
      default: 'off: only VMs whose workflow is running',
      example: '--all',
    },
  ],
  temporal: true,
  async run({ values, json }, io) {
    const conn = await connectClient(io, { autoStart: false });
    const listed = await new GpuprovClient(conn.client).list({ all: values.all === true });
    // Orphans (stage `orphan`) until the account watcher has deleted them, and what became of cut-short VMs' instances.
    const deployment = await currentDeployment(conn.client, io.env, conn.namespace);
    const rows = values.all === true ? withOrphans(listed, await watcherStates(conn.client, deployment)) : listed;
    if (json) {
      io.out(JSON.stringify(rows) + '\n');
      return EXIT_OK;
    }
    if (rows.length === 0) {
      io.out(`no VMs${values.all ? '' : ' running'} (deployment ${deployment}). next: npx provision start --name gpu1\n`);
      return EXIT_OK;
    }
    // `--recover` relaunches: a column only when some VM has one.
    const recovered = rows.filter((r) => r.recovered);
    io.out(
      table([
        ['NAME', 'STAGE', 'CLOUD', 'REGION', 'TYPE', 'WORKFLOW', 'STARTED', ...(recovered.length ? ['RECOVERED'] : [])],
        ...rows.map((r) => [
          r.name,
          r.instance
            ? `${r.stage}, cut short: ${r.instance.state === 'swept' ? 'instance swept' : r.instance.state === 'orphan' ? 'orphan' : 'no instance seen'}`
            : r.stage,
          r.cloud ?? '-',
          r.region ?? '-',
          r.instanceType ?? '-',
          `${r.workflowId} (${r.execution.toLowerCase()})`,
          r.startedAt,
          ...(recovered.length ? [r.recovered ? `${r.recovered.count}x, last: ${r.recovered.lastReason.split('\n')[0]}` : '-'] : []),
        ]),
      ]),
    );
    const leaked = rows.filter((r) => r.stage === 'leaked');
    const orphans = rows.filter((r) => r.stage === 'orphan');
    if (orphans.length)
      io.out(`\n${orphans.length} ORPHAN(S) (billed, no workflow): the account watcher deletes them after the grace. now: npx provision sweep\n`);
    const unknown = rows.filter((r) => r.stage === 'unknown');
    if (unknown.length) io.out(`\n${unknownAdvice(unknown.length, deployment, unknown[0]!.name)}\n`);
    io.out(`\ndeployment ${deployment}\n`);
    if (leaked.length) io.out(`\n${leaked.length} VM(s) LEAKED (still billed, retrying): fix the cause, then npx provision down ${leaked[0]!.name}\n`);
    return EXIT_OK;
  },
});
