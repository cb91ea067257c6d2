/**
 * Refusals of the Temporal server reach the user: `start` on a namespace made without gpuprov's
 * search attributes prints the server's own message and the exact commands that fix it, and
 * those commands do fix it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SEARCH_ATTRIBUTES } from '../../src/core/api';
import { runCli } from '../../src/client/cli';
import type { Io } from '../../src/client/command';
import { missingSearchAttributes } from '../../src/client/server-errors';
import { requireServer, testEnv } from '../harness/temporal';

const run = promisify(execFile);

describe.skipIf(!requireServer())('server refusals reach the user', () => {
  const namespace = `gpuprov-bare-${process.pid}-${Date.now().toString(36)}`;
  let connection: Connection;
  let env: NodeJS.ProcessEnv;

  const cli = async (...argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    let out = '';
    let err = '';
    const io: Io = { out: (s) => void (out += s), err: (s) => void (err += s), isTTY: false, env };
    const code = await runCli(argv, io);
    return { code, out, err };
  };

  beforeAll(async () => {
    const { address } = testEnv();
    const home = mkdtempSync(join(tmpdir(), 'gpuprov-sa-home-'));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    env = { PATH: process.env.PATH, HOME: home, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace };
    // A namespace made the plain way: no search attributes (the harness's own has them).
    await run(inject('temporalCliPath'), ['operator', 'namespace', 'create', '--address', address, '--namespace', namespace]);
    connection = await Connection.connect({ address });
    // The frontend learns of a new namespace on its next cache refresh: wait until it serves it.
    for (let i = 0; i < 120; i++) {
      const served = await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 }).then(
        () => true,
        () => false,
      );
      if (served) break;
      await new Promise((r) => setTimeout(r, 500));
    }
  });
  afterAll(async () => {
    await connection?.close();
  });

  it("start prints the server's message and one create command per missing attribute; running them fixes the namespace", async () => {
    expect(await missingSearchAttributes(connection, namespace)).toEqual([...SEARCH_ATTRIBUTES]);
    const text = await cli('start', '--name', 'sa1', '--detach');
    expect(text.code, text.err).toBe(1);
    // The server names the first attribute it checks (its order varies).
    expect(text.err).toContain(`Namespace ${namespace} has no mapping defined for search attribute Gpuprov`);
    const commands = text.err.split('\n').filter((l) => l.trim().startsWith('temporal operator search-attribute create'));
    expect(commands.map((c) => c.trim())).toEqual(
      SEARCH_ATTRIBUTES.map(
        (name) => `temporal operator search-attribute create --address ${testEnv().address} --namespace ${namespace} --name ${name} --type Keyword`,
      ),
    );
    process.stdout.write(`${text.err}\n`);

    const json = await cli('start', '--name', 'sa1', '--detach', '--json');
    expect(json.code).toBe(1);
    const body = JSON.parse(json.out) as { ok: boolean; error: { message: string; next: string } };
    expect(body.ok).toBe(false);
    expect(body.error.message).toMatch(/has no mapping defined for search attribute Gpuprov\w+\. /);
    expect(body.error.next).toContain('--name GpuprovInstanceType --type Keyword');

    // The printed commands are exact: run as printed, they leave nothing missing.
    for (const c of commands) {
      const [bin, ...args] = c.trim().split(/\s+/);
      expect(bin).toBe('temporal');
      await run(inject('temporalCliPath'), args);
    }
    // The frontend reads a namespace's attributes through its namespace cache: poll until it refreshed.
    let missing = await missingSearchAttributes(connection, namespace);
    for (let i = 0; i < 120 && missing.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
      missing = await missingSearchAttributes(connection, namespace);
    }
    expect(missing).toEqual([]);
  });
});
