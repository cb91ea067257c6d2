/**
 * deploymentRecordWorkflow (ID `gpuprov-deployment:<task queue>`): holds the deployment record of
 * a task queue's workers (src/core/deployment-record.ts) as its input and memo, so that any client
 * reads it with one describe call, with or without a worker. It never ends by itself and makes no
 * command after its first task: its history stays two tasks long. A replaced record is a new run.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { deploymentRecordQuery } from '../core/api';
import type { DeploymentRecord } from '../core/deployment-record';

export async function deploymentRecordWorkflow(record: DeploymentRecord): Promise<void> {
  setHandler(deploymentRecordQuery, () => record);
  await condition(() => false);
}
