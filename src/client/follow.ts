/** Following a VM's progress: a live stage line on a TTY, plain lines otherwise, nothing in --json. */
import type { Stage, VmStatus } from '../core/api';
import type { GpuprovClient } from './client';
import type { Io } from './command';
import { stageLine } from './output';

const SPIN = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Follow until the VM reaches one of `until`; returns the last status (undefined if it never answered). */
export async function follow(client: GpuprovClient, io: Io, name: string, json: boolean, until?: readonly Stage[]): Promise<VmStatus | undefined> {
  let last: VmStatus | undefined;
  let tick = 0;
  const started = Date.now();
  const live = io.isTTY && !json;
  const timer = live
    ? setInterval(() => {
        if (last) io.err(`\r\x1b[K${SPIN[tick++ % SPIN.length]} ${stageLine(last)} ${Math.round((Date.now() - started) / 1000)}s`);
      }, 120)
    : undefined;
  try {
    for await (const s of client.watch(name, until ? { until } : {})) {
      if (!json && !live) io.err(`${stageLine(s)}\n`);
      last = s;
    }
  } finally {
    if (timer) {
      clearInterval(timer);
      if (last) io.err(`\r\x1b[K${stageLine(last)}\n`);
    }
  }
  return last;
}
