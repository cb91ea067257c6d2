/**
 * Scans every workflow history on a test server for secret material (private keys, API keys,
 * kubeconfig credentials). Run by the global teardown over everything the run's tests produced.
 */
import { Client, Connection } from '@temporalio/client';
import { decodedHistoryText, findSecrets } from './secrets';

/** JSON of a history (protobuf JSON: payload data in base64) with every payload decoded too. */
export function historyText(history: unknown): string {
  return decodedHistoryText(JSON.stringify(history));
}

export interface ScanResult {
  workflows: number;
  hits: { workflowId: string; runId: string; found: string[] }[];
}

export async function scanServerHistories(address: string, namespace: string, known: string[] = []): Promise<ScanResult> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const result: ScanResult = { workflows: 0, hits: [] };
    for await (const wf of client.workflow.list()) {
      result.workflows += 1;
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      const found = findSecrets(historyText(history), known);
      if (found.length > 0) result.hits.push({ workflowId: wf.workflowId, runId: wf.runId, found });
    }
    return result;
  } finally {
    await connection.close();
  }
}
