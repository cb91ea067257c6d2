/** freePort: bindable, never Temporal's defaults, and never from the kernel's ephemeral range (where a starting server's own picks come from). */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/ports';

const ephemeralLow = (): number =>
  fs.existsSync('/proc/sys/net/ipv4/ip_local_port_range')
    ? Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    : 49_152;

describe('freePort', () => {
  it('gives bindable ports below the ephemeral range, never 7233/8233', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const p of ports) {
      expect([7233, 8233]).not.toContain(p);
      expect(p).toBeLessThan(ephemeralLow());
      expect(p).toBeGreaterThan(1024);
    }
    const srv = net.createServer();
    await new Promise<void>((resolve) => srv.listen(ports[0], '127.0.0.1', resolve));
    await new Promise((r) => srv.close(r));
  });

  it('skips a port that is taken', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => freePort()));
    const servers = await Promise.all(
      held.map(
        (p) =>
          new Promise<net.Server>((resolve) => {
            const s = net.createServer();
            s.listen(p, '127.0.0.1', () => resolve(s));
          }),
      ),
    );
    const picked = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    for (const p of picked) expect(held).not.toContain(p);
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });
});
