/**
 * One session of the built-in SSH server: `exec` and `shell`, with or without a pseudo-terminal,
 * `env`, `signal`, `window-change`, and the SFTP subsystem.
 *
 * Pseudo-terminals come from util-linux `script` (`script -qefc CMD /dev/null`: it allocates a
 * pty, runs CMD in a new session on it, relays bytes, and exits with CMD's status): node-pty
 * has no Linux prebuilds, and `script` is on every Debian/Fedora base image. Its pty starts with
 * echo off (stdin is a pipe), so the command first runs `stty sane rows R cols C`; later window
 * changes are applied with `stty -F <pty>`, which also sends SIGWINCH to the foreground job.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { PseudoTtyInfo, ServerChannel, Session } from 'ssh2';
import { serveSftp } from './sftp-server';

/** Process-group leaders started by sessions (killed when the server stops). */
export type SessionChildren = Set<number>;

export interface SessionContext {
  user: string;
  /** `<ip> <port>` of the client. */
  from: string;
  /** The port this server listens on. */
  port: number;
  children: SessionChildren;
  log: (line: string) => void;
}

/** Signal a process group; one that is already gone is fine. */
export function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // already gone (or an unknown signal name from the client)
  }
}

/** sshd's default PATH for a non-root login (Debian), so a session looks like a fresh VM's. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Client variables passed on, as Debian's sshd_config `AcceptEnv LANG LC_*` does. */
const ACCEPT_ENV = /^(LANG|LC_[A-Z_]+)$/;

function loginEnv(ctx: SessionContext, extra: Record<string, string>): NodeJS.ProcessEnv {
  const u = userInfo();
  const shell = u.shell ?? '/bin/sh';
  return { USER: ctx.user, LOGNAME: ctx.user, HOME: u.homedir, SHELL: shell, PATH: DEFAULT_PATH, SSH_CLIENT: `${ctx.from} ${ctx.port}`, ...extra };
}

/**
 * Copy `from` into `to` with backpressure, without ending `to`; the promise settles once `from`
 * has ended and every chunk has been handed to the channel (so an exit status sent after it
 * cannot overtake output still queued behind the peer's window).
 */
function relay(from: Readable, to: Writable): Promise<void> {
  let last: Promise<void> = Promise.resolve();
  from.on('data', (d: Buffer) => {
    last = new Promise((r) => {
      if (!to.write(d, () => r())) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
  });
  return new Promise((resolve) => {
    const done = (): void => void last.then(resolve);
    from.once('end', done);
    from.once('error', done);
  });
}

/** The pty device of the process `script` started (its only child), if it is there yet. */
function ptyOf(scriptPid: number): string | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== scriptPid) continue;
      const tty = readlinkSync(`/proc/${name}/fd/0`);
      if (tty.startsWith('/dev/pts/')) return tty;
    } catch {
      // raced with an exiting process
    }
  }
  return undefined;
}

// Hazard: synchronous on purpose. Two quick window-changes applied by concurrent stty processes can land
// out of order (the terminal keeps the older size), and keys the client sent after a window-change must
// reach a shell that already sees the new size; blocking the loop for one stty keeps both in order.
function resize(child: ChildProcess, rows: number, cols: number): void {
  const tty = child.pid === undefined ? undefined : ptyOf(child.pid);
  if (!tty) return;
  try {
    execFileSync('stty', ['-F', tty, 'rows', String(rows), 'cols', String(cols)], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // the shell exited meanwhile
  }
}

/** Start `command` (a login shell when undefined) for one channel and report its exit. */
function run(channel: ServerChannel, command: string | undefined, pty: PseudoTtyInfo | undefined, env: NodeJS.ProcessEnv, ctx: SessionContext): ChildProcess {
  const shell = env.SHELL ?? '/bin/sh';
  const opts = { cwd: env.HOME ?? '/', env, detached: true };
  const child = pty
    ? spawn('script', ['-q', '-e', '-f', '-c', `stty sane rows ${pty.rows} cols ${pty.cols} 2>/dev/null; ${command ?? 'exec "$SHELL" -l'}`, '/dev/null'], {
        ...opts,
        env: { ...env, TERM: pty.term || 'xterm' },
      })
    : spawn(shell, command === undefined ? ['-l'] : ['-c', command], opts);
  if (child.pid !== undefined) ctx.children.add(child.pid);
  channel.on('error', (err: Error) => ctx.log(`channel: ${err.message}`));
  const flushed = Promise.all([relay(child.stdout, channel), relay(child.stderr, channel.stderr)]);
  channel.pipe(child.stdin);
  child.stdin.on('error', () => undefined); // the command exited before reading all of stdin
  let exited = false;
  /** Exit status, then EOF and close: once, whichever of 'error' and 'close' comes first. */
  const finish = (report: () => void): void => {
    if (exited) return;
    exited = true;
    if (child.pid !== undefined) ctx.children.delete(child.pid);
    report();
    channel.end();
  };
  child.on('error', (err) =>
    finish(() => {
      channel.stderr.write(`gpuprov built-in sshd: cannot start ${pty ? 'script (util-linux, for the terminal)' : shell}: ${err.message}\n`);
      channel.exit(127);
    }),
  );
  child.on('close', (code, signal) => {
    void flushed.then(() => finish(() => (signal ? channel.exit(signal.replace(/^SIG/, ''), false, '') : channel.exit(code ?? 255))));
  });
  // The client went away first: hang up, as closing a terminal does.
  channel.on('close', () => {
    if (!exited && child.pid !== undefined) killGroup(child.pid, 'SIGHUP');
  });
  return child;
}

/** Serve the requests of one session channel. */
export function handleSession(session: Session, ctx: SessionContext): void {
  const extra: Record<string, string> = {};
  let pty: PseudoTtyInfo | undefined;
  let child: ChildProcess | undefined;
  session.on('env', (accept, reject, info) => {
    if (!ACCEPT_ENV.test(info.key)) return reject?.();
    extra[info.key] = info.val;
    accept?.();
  });
  session.on('pty', (accept, _reject, info) => {
    pty = info;
    accept?.();
  });
  session.on('window-change', (accept, _reject, info) => {
    if (pty && child) resize(child, info.rows, info.cols);
    accept?.();
  });
  session.on('signal', (accept, _reject, info) => {
    if (child?.pid !== undefined) killGroup(child.pid, `SIG${info.name.replace(/^SIG/, '')}` as NodeJS.Signals);
    accept?.();
  });
  session.on('shell', (accept) => {
    ctx.log(`shell for ${ctx.user} from ${ctx.from}${pty ? ' (pty)' : ''}`);
    child = run(accept(), undefined, pty, loginEnv(ctx, extra), ctx);
  });
  session.on('exec', (accept, _reject, info) => {
    child = run(accept(), info.command, pty, loginEnv(ctx, extra), ctx);
  });
  session.on('sftp', (accept) => {
    ctx.log(`sftp for ${ctx.user} from ${ctx.from}`);
    serveSftp(accept(), userInfo().homedir);
  });
  for (const refused of ['x11', 'auth-agent', 'subsystem'] as const) session.on(refused, (_accept: unknown, reject?: () => void) => reject?.());
}
