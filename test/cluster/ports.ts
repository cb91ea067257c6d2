/** The cluster's ports: nine distinct free ports on 127.0.0.1, and a bounded wait for one to listen. */
import * as net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A port free on 127.0.0.1 below 32768: the server records its ports in PostgreSQL's
 * cluster_membership table as `smallint`, and the kernel's ephemeral ports (what port 0 gives)
 * start above that range.
 */
async function freeLowPort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const ok = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (ok) return port;
  }
  throw new Error('no free 127.0.0.1 port between 20000 and 32000');
}

export async function servicePorts(services: readonly string[]): Promise<Record<string, string>> {
  const picked = new Set<number>();
  const pick = async (): Promise<string> => {
    for (let i = 0; i < 50; i++) {
      const port = await freeLowPort();
      if (picked.has(port)) continue;
      picked.add(port);
      return String(port);
    }
    throw new Error('no nine distinct free ports between 20000 and 32000');
  };
  const env: Record<string, string> = { FRONTEND_HTTP_PORT: await pick() };
  for (const s of services) {
    const key = s.toUpperCase();
    env[`${key}_GRPC_PORT`] = await pick();
    env[`${key}_MEMBERSHIP_PORT`] = await pick();
  }
  return env;
}

/** Resolves once 127.0.0.1:`port` accepts TCP; bounded. */
export async function listening(port: number, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(200)) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect({ host: '127.0.0.1', port }, () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}
