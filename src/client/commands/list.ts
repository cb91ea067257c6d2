import { GpuprovClient } from '../client';
import { EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { table } from '../output';

export const listCommand: Command = leaf({
  name: 'list',
  summary: 'every VM of this deployment (incl. leaked and lost); --all adds finished ones',
  flags: [
    {
      name: 'all',
      type: 'boolean',
      meaning: 'also list VMs whose workflow has ended (terminated, cancelled, failed)',
      default: 'off: only VMs whose workflow is running',
      example: '--all',
    },
  ],
  temporal: true,
  async run({ values, json }, io) {
    const conn = await connectClient(io, { autoStart: false });
    const rows = await new GpuprovClient(conn.client).list({ all: values.all === true });
    if (json) {
      io.out(JSON.stringify(rows) + '\n');
      return EXIT_OK;
    }
    if (rows.length === 0) {
      io.out(`no VMs${values.all ? '' : ' running'}. next: npx provision start --name gpu1\n`);
      return EXIT_OK;
    }
    io.out(
      table([
        ['NAME', 'STAGE', 'CLOUD', 'REGION', 'TYPE', 'WORKFLOW', 'STARTED'],
        ...rows.map((r) => [
          r.name,
          r.stage,
          r.cloud ?? '-',
          r.region ?? '-',
          r.instanceType ?? '-',
          `${r.workflowId} (${r.execution.toLowerCase()})`,
          r.startedAt,
        ]),
      ]),
    );
    const leaked = rows.filter((r) => r.stage === 'leaked');
    if (leaked.length) io.out(`\n${leaked.length} VM(s) LEAKED (still billed, retrying): fix the cause, then npx provision down ${leaked[0]!.name}\n`);
    return EXIT_OK;
  },
});
