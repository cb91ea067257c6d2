/**
 * Shell scripts run on a node over SSH for its bootstrap (pure text rendering; the activities
 * send them). Layout on the node, under `<dir>/<node>/`:
 *   log       `<stream> <seq> <time> <line>` — streams `verify`, `stdout`, `stderr`, each numbered from 1
 *   pid       process group of the detached start command
 *   exit      the start command's exit code, once it exited
 *   env.sh, start.sh, annotate.awk
 */
import { nodeDir, type BootstrapSpec } from '../core/fleet/types';

export { DEFAULT_REMOTE_DIR, nodeDir, nodeLogPath } from '../core/fleet/types';

/** POSIX single-quoting. */
export const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export interface NodeIdentity {
  fleet: string;
  group: string;
  index: number;
  role: string;
  node: string;
}

/** The node's port (`portBase + index`), when the spec has a base. */
export const nodePort = (b: BootstrapSpec, index: number): number | undefined => (b.portBase === undefined ? undefined : b.portBase + index);

export function nodeEnv(b: BootstrapSpec, id: NodeIdentity): Record<string, string> {
  const port = nodePort(b, id.index);
  return {
    ...b.env,
    GPUPROV_FLEET: id.fleet,
    GPUPROV_GROUP: id.group,
    GPUPROV_INDEX: String(id.index),
    GPUPROV_ROLE: id.role,
    GPUPROV_NODE: id.node,
    ...(port !== undefined ? { PORT: String(port) } : {}),
  };
}

/** Numbers each line per stream and flushes it at once (so `logs --follow` sees it live). */
// One write per line: stdout and stderr annotators append to the same log (O_APPEND), and mawk's
// `-W interactive` makes output unbuffered, so a printf with several conversions would be split
// into several writes and two streams' lines could interleave mid-line.
const ANNOTATE_AWK = '{ n++; l = sprintf("%s %d %s %s\\n", s, n, strftime("%Y-%m-%dT%H:%M:%S"), $0); printf "%s", l; fflush() }';

const cdNode = (dir: string): string => `D=${shq(dir)}; mkdir -p "$D" && cd "$D" || exit 97`;

/** Runs `cmd` from the login home with the node's env; output into the log as `stream`; exit code into `file`. */
const logged = (cmd: string, stream: string, file: string): string =>
  `{ ( . ./env.sh; cd; sh -c ${shq(cmd)} ) </dev/null 2>&1; echo $? > ${file}; } | awk -v s=${stream} -f annotate.awk >> log`;

/**
 * Verify: a fresh log and helper files, then each command in order (output into the log as
 * stream `verify`). Prints `verify-ok` or `verify-failed <index> <exit code>`.
 */
export function verifyScript(b: BootstrapSpec, id: NodeIdentity): string {
  const env = Object.entries(nodeEnv(b, id))
    .map(([k, v]) => `export ${k}=${shq(v)}`)
    .join('\n');
  const lines = [
    cdNode(nodeDir(b, id.node)),
    ': > log; rm -f exit pid vcode',
    `printf '%s\\n' ${shq(env)} > env.sh`,
    `printf '%s\\n' ${shq(ANNOTATE_AWK)} > annotate.awk`,
    `printf '%s\\n' ${shq(b.start)} > start.sh`,
  ];
  b.verify.forEach((cmd, i) => {
    lines.push(logged(cmd, 'verify', 'vcode'), `C=$(cat vcode); [ "$C" = 0 ] || { echo "verify-failed ${i} $C"; exit 0; }`);
  });
  lines.push('echo verify-ok');
  return lines.join('\n');
}

/**
 * Start the start command detached, in its own session (its process group = `pid`), stdout and
 * stderr numbered into the log. Idempotent: a start whose group still runs is not started twice.
 * Prints `started <pid>` or `running <pid>`.
 */
export function startScript(b: BootstrapSpec, node: string): string {
  const pipeline =
    '. ./env.sh; { { sh ./start.sh; echo $? > exit; } 2>&3 | awk $AWKI -v s=stdout -f annotate.awk >> log; } 3>&1 | awk $AWKI -v s=stderr -f annotate.awk >> log';
  return [
    cdNode(nodeDir(b, node)),
    'if [ -s pid ] && kill -0 "-$(cat pid)" 2>/dev/null; then echo "running $(cat pid)"; exit 0; fi',
    'rm -f exit',
    // mawk reads a pipe in blocks unless told otherwise; lines must reach the log as they come.
    'AWKI=; if awk -W version 2>&1 | grep -qi mawk; then AWKI="-W interactive"; fi; export AWKI',
    // Non-interactive sh: the background job stays in our process group, so setsid does not fork and $! is the new session's id.
    `setsid sh -c ${shq(pipeline)} </dev/null >/dev/null 2>&1 &`,
    'echo $! > pid',
    'echo "started $!"',
  ].join('\n');
}

/** Facts for the ready check: `exit=<code|none> alive=<0|1> out=<seq> err=<seq>`, and with a command check `ready=<0|1>`. */
export function checkScript(b: BootstrapSpec, node: string): string {
  const lines = [
    `cd ${shq(nodeDir(b, node))} || exit 97`,
    'E=none; [ -s exit ] && E=$(cat exit)',
    'A=0; [ -s pid ] && kill -0 "-$(cat pid)" 2>/dev/null && A=1',
    `S=$(awk '$1=="stdout"{o=$2} $1=="stderr"{e=$2} END{printf "out=%d err=%d", o, e}' log)`,
    'echo "exit=$E alive=$A $S"',
  ];
  if ('command' in b.ready)
    lines.push(`if ( . ./env.sh; cd; sh -c ${shq(b.ready.command)} ) </dev/null >/dev/null 2>&1; then echo ready=1; else echo ready=0; fi`);
  return lines.join('\n');
}

/** Stop the start command's process group (TERM, then KILL after ~5 s). Prints `stopped`, `gone` or `none`. */
export function stopScript(b: BootstrapSpec, node: string): string {
  return [
    `cd ${shq(nodeDir(b, node))} 2>/dev/null || { echo none; exit 0; }`,
    '[ -s pid ] || { echo none; exit 0; }',
    'P=$(cat pid)',
    'kill -TERM "-$P" 2>/dev/null || { rm -f pid; echo gone; exit 0; }',
    'i=0; while kill -0 "-$P" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done',
    'kill -KILL "-$P" 2>/dev/null; rm -f pid; echo stopped',
  ].join('\n');
}

/** The last `lines` log lines, or (follow) everything new as it arrives. */
export function tailCommand(logPath: string, lines: number, follow: boolean): string {
  return `tail -n ${Math.max(0, Math.floor(lines))}${follow ? ' -F' : ''} ${shq(logPath)}`;
}

/** Parsed output of `checkScript`. */
export interface CheckFacts {
  exit?: number;
  alive: boolean;
  lastStdoutSeq: number;
  lastStderrSeq: number;
  commandReady?: boolean;
}

export function parseCheck(out: string): CheckFacts | undefined {
  const m = /exit=(\S+) alive=([01]) out=(\d+) err=(\d+)/.exec(out);
  if (!m) return undefined;
  const r = /ready=([01])/.exec(out);
  return {
    ...(m[1] !== 'none' ? { exit: Number(m[1]) } : {}),
    alive: m[2] === '1',
    lastStdoutSeq: Number(m[3]),
    lastStderrSeq: Number(m[4]),
    ...(r ? { commandReady: r[1] === '1' } : {}),
  };
}
