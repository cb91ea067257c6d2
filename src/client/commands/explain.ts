import type { Client } from '@temporalio/client';
import { vmWorkflowId } from '../../core/api';
import { vmNameArg } from '../args';
import { EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { buildExplain, formatExplain, type ExplainReport } from '../explain-report';
import { fetchVmHistory, vmStatusOf } from '../history';

/** The story of the VM whose workflow is `workflowId` (running or closed), from its history and status. */
export async function explainWorkflow(client: Client, workflowId: string, name: string, nowMs = Date.now()): Promise<ExplainReport> {
  const history = await fetchVmHistory(client, workflowId);
  const status = await vmStatusOf(client, workflowId, history, name);
  return buildExplain(status, history, nowMs);
}

export const explainCommand: Command = leaf({
  name: 'explain',
  summary: 'the story of one VM: offers planned and why in that order, every attempt, blocks, clean-ups, winner, time to Ready, spend',
  args: [vmNameArg('explain')],
  flags: [],
  notes:
    "Reads the VM's workflow history, so it also works for a VM that has ended. Spend so far is price × billed time per attempt, counting each failed attempt's instance from its create to its confirmed deletion.",
  temporal: true,
  async run({ args, json }, io) {
    const name = args[0]!;
    const conn = await connectClient(io, { autoStart: false });
    const report = await explainWorkflow(conn.client, vmWorkflowId(name), name);
    io.out(json ? JSON.stringify(report) + '\n' : `${formatExplain(report)}\nnext: npx provision status ${name}\n`);
    return EXIT_OK;
  },
});
