/**
 * A throwaway PostgreSQL cluster for the cluster suite: initdb into a temporary directory, then
 * pg_ctl on a free 127.0.0.1 port with its socket in that directory. As root it runs as the
 * unprivileged account from binaries.ts (PostgreSQL refuses to run as root).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/ports';
import type { ClusterBinaries } from './binaries';

const run = promisify(execFile);

export interface Postgres {
  host: string;
  port: number;
  user: string;
  /** Random per run; reaches the server and the schema tool through their environment only. */
  password: string;
  logFile: string;
  stop(): Promise<void>;
}

const live = new Set<() => void>();
process.on('exit', () => {
  for (const stop of live) stop();
});

/** initdb + pg_ctl start under `dir` (which must exist); bounded: pg_ctl waits at most 60 s. */
export async function startPostgres(bins: ClusterBinaries, dir: string): Promise<Postgres> {
  const as = bins.pgUser ? { uid: bins.pgUser.uid, gid: bins.pgUser.gid } : {};
  const own = (p: string): void => {
    if (bins.pgUser) chownSync(p, bins.pgUser.uid, bins.pgUser.gid);
  };
  // The account PostgreSQL runs as must reach its directory inside `dir` (mkdtemp makes 0700).
  if (bins.pgUser) chmodSync(dir, 0o711);
  const root = path.join(dir, 'postgres');
  const data = path.join(root, 'data');
  mkdirSync(root, { mode: 0o700 });
  own(root);
  const user = 'temporal';
  const password = randomBytes(12).toString('hex');
  const pwfile = path.join(root, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  own(pwfile);
  const tool = (name: string): string => path.join(bins.pgBin, name);
  try {
    await run(
      tool('initdb'),
      ['-D', data, '-U', user, `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync'],
      {
        ...as,
        cwd: root,
        timeout: 120_000,
      },
    );
  } finally {
    rmSync(pwfile, { force: true });
  }
  const port = await freePort();
  const logFile = path.join(root, 'postgres.log');
  // fsync off: only an OS crash could lose commits, and the suite kills Temporal, never PostgreSQL.
  // 4 services x (20 + 10) pooled connections, plus the schema tool: above the default 100.
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off`;
  const pgCtl = (...args: string[]): string[] => ['-D', data, ...args];
  await run(tool('pg_ctl'), pgCtl('-l', logFile, '-o', options, '-w', '-t', '60', 'start'), { ...as, cwd: root, timeout: 90_000 });
  const stopNow = (): void => {
    try {
      execFileSync(tool('pg_ctl'), pgCtl('-m', 'immediate', '-w', '-t', '20', 'stop'), { ...as, cwd: root, stdio: 'ignore', timeout: 30_000 });
    } catch {
      // already stopped
    }
  };
  live.add(stopNow);
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    logFile,
    stop: async () => {
      live.delete(stopNow);
      await run(tool('pg_ctl'), pgCtl('-m', 'fast', '-w', '-t', '30', 'stop'), { ...as, cwd: root, timeout: 45_000 }).catch(stopNow);
    },
  };
}
