/**
 * The user's side of the k3s suites: the path `provision kubeconfig` printed, an HTTPS request
 * with a kubeconfig's server, CA and client certificate, and `provision tunnel` run as its own
 * process for the length of a callback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';

/** The file of the `export KUBECONFIG=…` line among a command's output lines. */
export function kubeconfigPathOf(stdout: string[]): string {
  const line = stdout.find((l) => l.includes('KUBECONFIG='));
  if (!line) throw new Error(`no KUBECONFIG= line in: ${stdout.join('\n')}`);
  return line.split('KUBECONFIG=')[1]!.trim();
}

/** GET `path` on the API with the kubeconfig's server, CA and client certificate. */
export function apiGet(kubeconfigPath: string, path: string): Promise<{ status: number; body: string }> {
  const kc = parse(readFileSync(kubeconfigPath, 'utf8'));
  const cluster = kc.clusters[0].cluster;
  const user = kc.users[0].user;
  const url = new URL(cluster.server);
  const b64 = (s: string) => Buffer.from(s, 'base64');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        ca: b64(cluster['certificate-authority-data']),
        cert: b64(user['client-certificate-data']),
        key: b64(user['client-key-data']),
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((r) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      r(true);
    });
    sock.once('error', () => r(false));
  });
}

/** Run `provision tunnel <args>` (sim/run-command.ts) until 127.0.0.1:`localPort` accepts, then `fn`; the tunnel is stopped after. */
export async function withTunnel<T>(args: string[], localPort: number, env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> {
  const tunnel: ChildProcess = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), [join(__dirname, 'run-command.ts'), 'tunnel', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tunnelErr = '';
  tunnel.stderr!.on('data', (d: Buffer) => (tunnelErr += d.toString('utf8')));
  try {
    const deadline = Date.now() + 60_000; // tsx starting the command on a loaded machine
    while (!(await accepts(localPort))) {
      if (Date.now() > deadline || tunnel.exitCode !== null) throw new Error(`tunnel did not open: ${tunnelErr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return await fn();
  } finally {
    if (tunnel.pid !== undefined && tunnel.exitCode === null) tunnel.kill('SIGTERM');
    await new Promise((r) => (tunnel.exitCode !== null ? r(undefined) : tunnel.once('exit', r)));
  }
}
