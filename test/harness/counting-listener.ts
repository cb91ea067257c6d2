/** A TCP listener on 127.0.0.1 that stands in for any server the CLI could reach: it closes every connection and counts them. */
import { createServer } from 'node:net';

export interface CountingListener {
  port: number;
  /** Connections accepted so far (each closed at once). */
  connections(): number;
  close(): void;
}

export async function startCountingListener(): Promise<CountingListener> {
  let n = 0;
  const server = createServer((s) => {
    n++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as { port: number }).port, connections: () => n, close: () => void server.close() };
}
