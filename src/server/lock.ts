/**
 * A cross-process lock file (`open(…, 'wx')` is atomic) holding the owner's pid, so that
 * concurrent `provision` invocations or test workers do not install or start things twice.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** True when a process with this pid exists (signal 0 checks without sending anything). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(lockPath, 'utf8').trim(), 10);
    return Number.isNaN(pid) ? undefined : pid;
  } catch {
    return undefined;
  }
}

/**
 * Runs `fn` while holding `lockPath`. A lock whose owner died is taken over; a live owner is
 * waited for up to `timeoutMs`.
 */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>, timeoutMs = 20 * 60_000): Promise<T> {
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(lockPath);
    const age = Date.now() - (fs.statSync(lockPath, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    // An unreadable pid right after creation is the owner mid-write: only treat it as stale when old.
    if ((owner !== undefined && !pidAlive(owner)) || (owner === undefined && age > 5_000)) {
      // Re-check just before removing so a waiter does not delete a lock another waiter just took.
      if (readOwner(lockPath) === owner) fs.rmSync(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${lockPath} (held by pid ${owner ?? '?'}); remove it if that process is gone`);
    }
    await sleep(250);
  }
  try {
    return await fn();
  } finally {
    if (readOwner(lockPath) === process.pid) fs.rmSync(lockPath, { force: true });
  }
}
