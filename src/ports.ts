/**
 * Ports this process picks for servers it starts (a Temporal dev server, a local instance's sshd).
 *
 * Hazard: a port the kernel hands out for `listen(0)` comes from its ephemeral range, and so do
 * the ports any other starting process asks the kernel for (a Temporal dev server picks its
 * internal services' ports that way). Between picking and binding, such a process can take the
 * port, and the server then exits on "address already in use" (two embedded installs starting at
 * once did). So the pick is a random port below the ephemeral range, tried with a bind.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';

const RESERVED = new Set([7233, 8233]);
/** How far below the ephemeral range picks go. */
const SPAN = 12_000;
/** Ports this process already gave out: not given twice (the kernel's own picks rarely repeat soon; random ones could). */
const given = new Set<number>();

/** The kernel's ephemeral range's first port (Linux), or the IANA default elsewhere. */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > SPAN + 1024) return low;
  } catch {
    // Not Linux: the IANA dynamic range.
  }
  return 49_152;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 that was free a moment ago, outside the kernel's ephemeral range; never 7233 or 8233. */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  for (let i = 0; i < 200; i++) {
    const port = high - 1 - Math.floor(Math.random() * SPAN);
    if (RESERVED.has(port) || given.has(port) || !(await bindable(port))) continue;
    given.add(port);
    return port;
  }
  throw new Error(`no free port on 127.0.0.1 in ${high - SPAN}..${high - 1}`);
}
