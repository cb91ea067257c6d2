/**
 * The deployment record, with the worker process as an operator runs it (`src/worker.ts`, the
 * same main as `provision worker`): the first worker of a task queue records its deployment id and
 * SSH key; a second host without the shared key refuses to start (exit 2, the fix named) instead
 * of failing launches later; a worker of another id refuses while a VM is open, and replaces the
 * record once none is.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { teardownSignal, vmWorkflowId } from '../../src/core/api';
import { readDeploymentRecord } from '../../src/client/deployment-record';
import { generateEd25519 } from '../../src/ssh/keygen';
import { WORKER_READY_TEXT } from '../../src/server/worker-ready';
import { prebuiltWorkflowBundle } from '../harness/worker-process';
import { requireServer, testEnv } from '../harness/temporal';
import { FAST, waitFor, waitStage } from './helpers';

const ROOT = join(__dirname, '..', '..');

interface Ran {
  code: number | null;
  out: string;
  stop(): Promise<void>;
}

function keyFile(dir: string, name: string): string {
  const p = join(dir, name);
  writeFileSync(p, generateEd25519('test').private, { mode: 0o600 });
  return p;
}

describe.skipIf(!requireServer())('the deployment record (worker processes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpuprov-record-'));
  const taskQueue = `record-${randomUUID().slice(0, 8)}`;
  const keyA = keyFile(dir, 'a');
  const keyB = keyFile(dir, 'b');
  const running: Ran[] = [];
  afterAll(async () => {
    for (const r of running) await r.stop();
  });

  /** Runs the worker main until it polls (resolves with code null) or exits (its code). */
  async function worker(env: Record<string, string>): Promise<Ran> {
    const child = spawn(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, join(ROOT, 'src', 'worker.ts')], {
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        GPUPROV_STATE_DIR: join(dir, `state-${randomUUID().slice(0, 6)}`),
        GPUPROV_LOCAL_ROOT: join(dir, 'cloud'),
        GPUPROV_WORKFLOW_BUNDLE: await prebuiltWorkflowBundle(),
        TEMPORAL_ADDRESS: testEnv().address,
        TEMPORAL_NAMESPACE: testEnv().namespace,
        GPUPROV_TASK_QUEUE: taskQueue,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const polling = new Promise<null>((r) => {
      const on = (d: Buffer): void => {
        out += d.toString();
        if (out.includes(WORKER_READY_TEXT)) r(null);
      };
      child.stdout.on('data', on);
      child.stderr.on('data', on);
    });
    const code = await Promise.race([polling, exited, new Promise<number>((r) => setTimeout(() => r(-1), 90_000))]);
    const ran: Ran = {
      code,
      out,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
    if (code === null) running.push(ran);
    return ran;
  }

  it('a second host with another SSH key refuses to start, naming the fix; the record keeps the first key', async () => {
    const a = await worker({ GPUPROV_SSH_KEY_FILE: keyA, GPUPROV_DEPLOYMENT: 'team-a' });
    expect(a.code, a.out).toBeNull();
    const record = await readDeploymentRecord(await testEnv().client(), taskQueue);
    expect(record).toMatchObject({ deployment: 'team-a', taskQueue });
    const b = await worker({ GPUPROV_SSH_KEY_FILE: keyB, GPUPROV_DEPLOYMENT: 'team-a' });
    expect(b.code, b.out).toBe(2);
    expect(b.out).toContain('GPUPROV_SSH_KEY_FILE');
    expect(b.out).toContain(record!.keyFingerprint);
    expect(b.out).toMatch(/fix: give this worker the deployment key/);
    expect(await readDeploymentRecord(await testEnv().client(), taskQueue)).toEqual(record);
  });

  it('another deployment id is refused while a VM is open, and replaces the record once none is', async () => {
    const client = await testEnv().client();
    const h = await client.workflow.start('vmWorkflow', {
      taskQueue,
      workflowId: `${vmWorkflowId('rec1')}-${randomUUID().slice(0, 6)}`,
      args: [{ spec: { name: 'rec1', clouds: ['local'] }, tuning: FAST }],
    });
    await waitStage(h, 'ready', 90_000);
    const other = await worker({ GPUPROV_SSH_KEY_FILE: keyA, GPUPROV_DEPLOYMENT: 'team-b' });
    expect(other.code, other.out).toBe(2);
    expect(other.out).toContain('GPUPROV_DEPLOYMENT');
    expect(other.out).toContain('GPUPROV_DEPLOYMENT=team-a');
    await h.signal(teardownSignal);
    await waitFor(h, (s) => s.endedAt !== undefined, 'torn down', 60_000);
    const again = await worker({ GPUPROV_SSH_KEY_FILE: keyA, GPUPROV_DEPLOYMENT: 'team-b' });
    expect(again.code, again.out).toBeNull();
    expect(again.out).toContain('replaced: deployment id team-a → team-b');
    expect(await readDeploymentRecord(client, taskQueue)).toMatchObject({ deployment: 'team-b' });
  });
});
