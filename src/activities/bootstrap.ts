/**
 * Per-node bootstrap over SSH (`BootstrapSpec`, src/core/fleet/types.ts): verify, start detached with a
 * sequence-numbered log on the node, check readiness, stop. Every activity is one SSH round trip
 * with the worker's key, pinned to the host key the launch recorded. Only compact facts come
 * back (stages, exit codes, sequence numbers): log bodies stay on the node.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FAILURE_TYPES } from '../core/failures';
import { checkScript, nodePort, parseCheck, startScript, stopScript, verifyScript, type NodeIdentity } from '../fleet/remote';
import type { BootstrapSpec } from '../core/fleet/types';
import type { SshEndpoint } from '../core/provider';
import { requireWorkerKey, SshError, throwSshFailure, withSsh, type SshIdentity, type SshSession, type SshTarget, type WorkerKeyRef } from '../ssh';

export interface BootstrapTarget {
  endpoint: SshEndpoint;
  /** `<type> <base64>` the launch pinned; the connection is refused when the node presents another. */
  hostKey?: string;
  /** The key the VM was created with: a worker with another key fails at once (WorkerKeyMismatch). */
  workerKey?: WorkerKeyRef;
  node: NodeIdentity;
  spec: BootstrapSpec;
}

/** A compact observation for the fleet's history. */
export interface BootstrapStep {
  stage: 'verified' | 'started' | 'ready' | 'stopped';
  lastStdoutSeq?: number;
  lastStderrSeq?: number;
  /** Epoch ms on the worker. */
  at: number;
  detail?: string;
}

const OUTPUT_CAP = 8 * 1024;

interface Ran {
  code: number | null;
  out: string;
}

/** Run `script` with `sh -s`; its stdout (capped) is what comes back. */
async function exec(s: SshSession, script: string): Promise<Ran> {
  const r = await s.exec('sh -s', { stdin: `${script}\n`, maxBytes: OUTPUT_CAP });
  return { code: r.code, out: r.stdout };
}

function sshTarget(t: BootstrapTarget): SshTarget {
  return { host: t.endpoint.host, port: t.endpoint.port, user: t.endpoint.user ?? 'root', ...(t.hostKey ? { hostKey: t.hostKey } : {}) };
}

/** TCP connect from the node to 127.0.0.1:port; with `path`, an HTTP GET answered 2xx/3xx. */
async function probePort(s: SshSession, port: number, path?: string): Promise<boolean> {
  const stream = await s.forward('127.0.0.1', port).catch(() => undefined);
  if (!stream) return false;
  return new Promise((resolve) => {
    if (path === undefined) {
      stream.end();
      return resolve(true);
    }
    let head = '';
    const timer = setTimeout(() => done(false), 5_000);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      stream.destroy();
      resolve(ok);
    };
    stream.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(head);
      if (m) done(Number(m[1]) >= 200 && Number(m[1]) < 400);
      else if (head.length > 1024 || head.includes('\n')) done(false);
    });
    stream.on('close', () => done(false));
    stream.on('error', () => done(false));
    stream.write(`GET ${path} HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  });
}

const fatal = (message: string): ApplicationFailure => ApplicationFailure.create({ type: FAILURE_TYPES.BootstrapFailed, message, nonRetryable: true });
const notReady = (message: string): ApplicationFailure => ApplicationFailure.create({ type: FAILURE_TYPES.NotReady, message });

/** What every bootstrap activity uses: the worker's key, the clock, and one script run over SSH. */
interface BootstrapEnv {
  ssh: SshIdentity;
  now: () => number;
  /** Runs a script on the node; exit 97 (the bootstrap directory is unusable) is fatal. */
  run: (t: BootstrapTarget, script: string) => Promise<Ran>;
}

/** Fresh log and helper files, then each verify command in order (their output goes to the log). */
async function bootstrapVerify(env: BootstrapEnv, t: BootstrapTarget): Promise<BootstrapStep> {
  const r = await env.run(t, verifyScript(t.spec, t.node));
  const failedAt = /verify-failed (\d+) (\d+)/.exec(r.out);
  if (failedAt) throw fatal(`verify command #${Number(failedAt[1]) + 1} exited ${failedAt[2]} (see \`provision logs ${t.node.node}\`)`);
  if (!r.out.includes('verify-ok')) throw notReady(`verify did not finish (exit ${r.code})`);
  return { stage: 'verified', at: env.now() };
}

/** Start the start command detached (idempotent: a running one is kept). */
async function bootstrapStart(env: BootstrapEnv, t: BootstrapTarget): Promise<BootstrapStep> {
  const r = await env.run(t, startScript(t.spec, t.node.node));
  if (!/^(started|running) \d+/m.test(r.out)) throw notReady(`start did not report a process (exit ${r.code})`);
  return { stage: 'started', at: env.now() };
}

/** The port the ready condition probes (its own, else the node's), none for a command condition. */
function readyPort(t: BootstrapTarget): number | undefined {
  const ready = t.spec.ready;
  return 'http' in ready
    ? (ready.http.port ?? nodePort(t.spec, t.node.index))
    : 'tcp' in ready
      ? (ready.tcp.port ?? nodePort(t.spec, t.node.index))
      : undefined;
}

/** One SSH session: the node's bootstrap facts and whether the ready condition holds (undefined: no state on the node). */
async function observeReady(env: BootstrapEnv, t: BootstrapTarget): Promise<{ facts: NonNullable<ReturnType<typeof parseCheck>>; ok: boolean } | undefined> {
  const ready = t.spec.ready;
  const port = readyPort(t);
  return withSsh(sshTarget(t), env.ssh, async (c) => {
    const facts = parseCheck((await exec(c, checkScript(t.spec, t.node.node))).out);
    if (!facts) return undefined;
    if (facts.exit !== undefined && facts.exit !== 0) return { facts, ok: false };
    const ok =
      'command' in ready
        ? facts.commandReady === true
        : port !== undefined && (await probePort(c, port, 'http' in ready ? (ready.http.path ?? '/') : undefined));
    return { facts, ok };
  }).catch(throwSshFailure);
}

/** NotReady (retryable: the retry policy polls) until the ready condition holds; fatal when the start command exited non-zero. */
async function bootstrapAwaitReady(env: BootstrapEnv, t: BootstrapTarget): Promise<BootstrapStep> {
  requireWorkerKey(env.ssh, t.workerKey);
  const seen = await observeReady(env, t);
  if (!seen) throw fatal(`bootstrap state missing on ${t.node.node} (was it started?)`);
  const { facts, ok } = seen;
  const seqs = { lastStdoutSeq: facts.lastStdoutSeq, lastStderrSeq: facts.lastStderrSeq };
  if (facts.exit !== undefined && facts.exit !== 0)
    throw fatal(`start command exited ${facts.exit} (stdout #${facts.lastStdoutSeq}, stderr #${facts.lastStderrSeq})`);
  if (!ok) throw notReady(`not ready yet (stdout #${facts.lastStdoutSeq}, stderr #${facts.lastStderrSeq}${facts.alive ? '' : ', start command not running'})`);
  return { stage: 'ready', ...seqs, at: env.now() };
}

/**
 * Stop the start command's process group. A node that stays unreachable after a few tries
 * reports `unreachable` (a VM that cannot be reached cannot be cleaned by SSH; its teardown follows).
 */
async function bootstrapStop(env: BootstrapEnv, t: BootstrapTarget): Promise<BootstrapStep> {
  requireWorkerKey(env.ssh, t.workerKey);
  try {
    const r = await withSsh(sshTarget(t), env.ssh, (c) => exec(c, stopScript(t.spec, t.node.node)));
    return { stage: 'stopped', at: env.now(), detail: /stopped|gone|none/.exec(r.out)?.[0] ?? `exit ${r.code}` };
  } catch (err) {
    // A node presenting another host key is never logged into, not even to give up on it.
    if (err instanceof SshError && err.reason !== 'host-key-mismatch' && Context.current().info.attempt >= 3)
      return { stage: 'stopped', at: env.now(), detail: 'unreachable' };
    return throwSshFailure(err);
  }
}

export function createBootstrapActivities(deps: { ssh: SshIdentity; now?: () => number }) {
  const env: BootstrapEnv = {
    ssh: deps.ssh,
    now: deps.now ?? Date.now,
    run: async (t, script) => {
      requireWorkerKey(deps.ssh, t.workerKey);
      const r = await withSsh(sshTarget(t), deps.ssh, (c) => exec(c, script)).catch(throwSshFailure);
      if (r.code === 97) throw fatal(`cannot use the bootstrap directory on ${t.node.node}`);
      return r;
    },
  };
  return {
    /** Fresh log and helper files, then each verify command in order. */
    bootstrapVerify: (t: BootstrapTarget): Promise<BootstrapStep> => bootstrapVerify(env, t),
    /** Start the start command detached (idempotent: a running one is kept). */
    bootstrapStart: (t: BootstrapTarget): Promise<BootstrapStep> => bootstrapStart(env, t),
    /** NotReady until the ready condition holds; fatal when the start command exited non-zero. */
    bootstrapAwaitReady: (t: BootstrapTarget): Promise<BootstrapStep> => bootstrapAwaitReady(env, t),
    /** Stop the start command's process group (`unreachable` after a few failed tries). */
    bootstrapStop: (t: BootstrapTarget): Promise<BootstrapStep> => bootstrapStop(env, t),
  };
}
