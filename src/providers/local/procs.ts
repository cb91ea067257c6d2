/**
 * The process table side of the local cloud: where OpenSSH's sshd is, which sshd PIDs are
 * alive, killing them, and whether a port accepts TCP. Linux only (reads /proc).
 */
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join, resolve } from 'node:path';

export const DEFAULT_SSHD = '/usr/sbin/sshd';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** OpenSSH's sshd: /usr/sbin/sshd, else the first executable `sshd` on PATH. */
export function findSshd(path = process.env.PATH ?? ''): string | undefined {
  const dirs = path.split(delimiter).filter((d) => d !== '');
  return [DEFAULT_SSHD, ...dirs.map((d) => join(d, 'sshd'))].find(executable);
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** State letter and parent pid from /proc/<pid>/stat (the comm field may hold spaces and parens). */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  const s = read(`/proc/${pid}/stat`);
  if (s === undefined) return undefined;
  const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return { state: rest[0] ?? '?', ppid: Number(rest[1]) };
}

function cmdlineOf(pid: number): string {
  return (read(`/proc/${pid}/cmdline`) ?? '').replace(/\0/g, ' ');
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
}

/** Alive and not a zombie (a killed sshd whose parent has not reaped it yet is not alive). */
function running(pid: number): boolean {
  const st = statOf(pid);
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
}

/** True when `pid` is a live sshd started with this config file (guards against PID reuse). */
export function isSshdOf(pid: number, configPath: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || !running(pid)) return false;
  const cmd = cmdlineOf(pid);
  return cmd.includes('sshd') && cmd.includes(` -f ${configPath} `);
}

/**
 * Live sshd listener PIDs on this machine whose config lives under `root`: every instance
 * of a local cloud, including ones whose state directory was already moved away (leaks).
 * Per-connection children are not instances: a fresh fork still shows its listener's
 * command line (its parent is then a listener too) and the re-exec carries `-R`.
 */
export function liveSshdPids(root: string): number[] {
  const marker = ` -f ${resolve(root)}/`;
  const found = new Map<number, number>();
  for (const pid of pids()) {
    const cmd = cmdlineOf(pid);
    const st = statOf(pid);
    if (st && st.state !== 'Z' && st.state !== 'X' && cmd.includes('sshd') && cmd.includes(marker) && !/ -R( |$)/.test(cmd)) found.set(pid, st.ppid);
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

/** Number of live sshd PIDs belonging to instances under `root` (the leak count). */
export function countLive(root: string): number {
  return liveSshdPids(root).length;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Stop an instance's sshd and its per-connection children: SIGTERM, then SIGKILL for whatever
 * still runs, within a short bounded check (≤ `settleMs`), since a killed process lingers in
 * /proc until the kernel has torn it down. Returns false when one still runs after that (the
 * caller reports Transient and a retried delete finishes the job).
 */
export async function killSshd(pid: number, configPath: string, settleMs = 1000): Promise<boolean> {
  if (!isSshdOf(pid, configPath)) return true;
  const marker = ` -f ${configPath} `;
  // Every descendant now, before the listener dies: its sessions (which have renamed
  // themselves, `sshd: user@notty`, and run the user's commands) are reparented away at once.
  const targets = descendants(pid);
  signal(pid, 'SIGTERM');
  const until = Date.now() + settleMs;
  let quiet = 0;
  // Done after a few clean scans in a row: a dying listener can still fork a child for a
  // pending connection; the child is reparented at once and shows the listener's command
  // line, then (briefly empty while it execs) `sshd ... -R`, so a later scan catches it.
  while (quiet < QUIET_SCANS) {
    for (const p of pids()) {
      const st = statOf(p);
      if (st && (targets.has(st.ppid) || cmdlineOf(p).includes(marker))) targets.add(p);
    }
    const alive = [...targets].filter(running);
    if (alive.length > 0 && Date.now() >= until) return false;
    for (const p of alive) signal(p, 'SIGKILL');
    quiet = alive.length === 0 ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

const QUIET_SCANS = 3;

/** `pid` and every process below it in the process tree. */
function descendants(pid: number): Set<number> {
  const parent = new Map<number, number>();
  for (const p of pids()) {
    const st = statOf(p);
    if (st) parent.set(p, st.ppid);
  }
  const out = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [p, pp] of parent) {
      if (!out.has(p) && out.has(pp)) {
        out.add(p);
        grew = true;
      }
    }
  }
  return out;
}

/** One TCP connect to 127.0.0.1:port, closed at once; false on refusal or timeout. */
export function acceptsTcp(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}
