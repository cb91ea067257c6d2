/**
 * The moto EC2 emulator as a child process: `moto_server -H 127.0.0.1 -p 0` (moto prints the
 * port it bound), waited on until it answers, stopped with SIGTERM.
 *
 * Test files call `motoMissing()` to decide whether to skip: with `GPUPROV_REQUIRE_ALL=1` a
 * missing moto fails instead, with the install hint.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export interface MotoServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  close(): Promise<void>;
}

const INSTALL_HINT = "moto_server not found on PATH: pip install 'moto[server]'";

let probed: boolean | undefined;

/** True when moto_server can run here. */
export function motoAvailable(): boolean {
  probed ??= spawnSync('moto_server', ['--help'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
  return probed;
}

/** True when the moto suites should be skipped; throws when GPUPROV_REQUIRE_ALL=1 demands moto. */
export function motoMissing(): boolean {
  if (motoAvailable()) return false;
  if (process.env.GPUPROV_REQUIRE_ALL === '1') throw new Error(`GPUPROV_REQUIRE_ALL=1: ${INSTALL_HINT}`);
  return true;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/moto-api/data.json`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Start a fresh moto (empty state). `env` adds variables such as MOTO_AMIS_PATH. */
export async function startMoto(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<MotoServer> {
  if (!motoAvailable()) throw new Error(INSTALL_HINT);
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', '0'], {
    env: { ...process.env, ...env, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`moto_server did not start within ${timeoutMs} ms: ${output.slice(-500)}`)), timeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      void stop(child).then(() => reject(err));
    };
    const onData = (d: Buffer): void => {
      output += d.toString('utf8');
      const m = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (err) => fail(err));
    child.once('exit', (code) => fail(new Error(`moto_server exited (${code}) before listening: ${output.slice(-500)}`)));
  });
  // Keep draining the pipes so moto never blocks on a full buffer.
  child.stdout?.resume();
  child.stderr?.resume();
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(url))) {
    if (Date.now() > deadline) {
      await stop(child);
      throw new Error(`moto_server at ${url} never answered`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, pid: child.pid!, close: () => stop(child) };
}
