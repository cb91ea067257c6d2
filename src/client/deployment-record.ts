/**
 * The deployment record on the Temporal server (decisions in src/core/deployment-record.ts): read
 * by the CLI (which deployment it talks to, for `status`, `list`, `sweep`), claimed by every
 * worker before it polls, so a worker of another id or another SSH key refuses to start instead
 * of failing launches. The record is the input and memo of `deploymentRecordWorkflow`; one
 * describe call reads it, with or without a worker.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TASK_QUEUE } from '../core/api';
import { InputError } from '../core/errors';
import { decideClaim, deploymentRecordId, type DeploymentClaim, type DeploymentRecord } from '../core/deployment-record';

/** The task queue's record, or undefined when no worker has claimed it yet. */
export async function readDeploymentRecord(client: Client, taskQueue: string = TASK_QUEUE): Promise<DeploymentRecord | undefined> {
  try {
    const d = await client.workflow.getHandle(deploymentRecordId(taskQueue)).describe();
    if (d.status.name !== 'RUNNING') return undefined;
    const r = d.memo?.record as DeploymentRecord | undefined;
    return r && typeof r.deployment === 'string' && typeof r.keyFingerprint === 'string' ? r : undefined;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** The deployment the CLI talks to: the record's, else GPUPROV_DEPLOYMENT, else the namespace. */
export async function currentDeployment(client: Client, env: NodeJS.ProcessEnv, namespace: string, taskQueue?: string): Promise<string> {
  const r = await readDeploymentRecord(client, taskQueue ?? (env.GPUPROV_TASK_QUEUE || TASK_QUEUE));
  return r?.deployment ?? (env.GPUPROV_DEPLOYMENT || namespace);
}

/** Open vmWorkflows of the task queue (they bind the record's id and key). */
export async function openVms(client: Client, taskQueue: string): Promise<number> {
  const q = `WorkflowType = 'vmWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'`;
  return (await client.workflow.count(q)).count;
}

async function startRecord(client: Client, record: DeploymentRecord): Promise<void> {
  await client.workflow.start('deploymentRecordWorkflow', {
    workflowId: deploymentRecordId(record.taskQueue),
    taskQueue: record.taskQueue,
    args: [record],
    memo: { record },
    staticSummary: `deployment ${record.deployment} · worker key ${record.keyFingerprint}`,
  });
}

export interface ClaimResult {
  record: DeploymentRecord;
  /** `created`, `ok`, or why it was replaced. */
  outcome: string;
}

/**
 * Claim the task queue's record for this worker: made when absent, kept when it matches, replaced
 * when the decision table allows, else an InputError naming the variable and the fix (exit 2).
 */
export async function claimDeployment(
  client: Client,
  taskQueue: string,
  claim: DeploymentClaim,
  o: { rotateKey?: boolean; now?: () => Date } = {},
): Promise<ClaimResult> {
  const mine: DeploymentRecord = { ...claim, taskQueue, since: (o.now?.() ?? new Date()).toISOString() };
  // Bounded: a lost race (another worker made or replaced it in between) is decided again.
  for (let round = 0; round < 3; round++) {
    const record = await readDeploymentRecord(client, taskQueue);
    const open = record && (record.deployment !== claim.deployment || record.keyFingerprint !== claim.keyFingerprint) ? await openVms(client, taskQueue) : 0;
    const d = decideClaim(record, claim, open, o.rotateKey === true);
    if (d.decision === 'ok') return { record: record!, outcome: 'ok' };
    if (d.decision === 'refuse') throw new InputError(d.field, d.message, d.fix);
    try {
      if (d.decision === 'replace') await client.workflow.getHandle(deploymentRecordId(taskQueue)).terminate(`replaced: ${d.reason}`);
      await startRecord(client, mine);
      return { record: mine, outcome: d.decision === 'replace' ? `replaced: ${d.reason}` : 'created' };
    } catch (err) {
      // Another worker made or replaced it in between: decide again against what it wrote.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) && !(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  throw new Error(`could not claim the deployment record ${deploymentRecordId(taskQueue)}: other workers keep changing it`);
}
