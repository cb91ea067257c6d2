/**
 * Per-node bootstrap over SSH (see `node-bootstrap-spec.md`): verify, start detached with a
 * sequence-numbered log on the node, check readiness, stop. Every activity is one SSH round trip
 * with the worker's key, pinned to the host key the launch recorded. Only compact facts come
 * back (stages, exit codes, sequence numbers): log bodies stay on the node.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Client, type ClientChannel } from 'ssh2';
import { FAILURE_TYPES } from '../core/failures';
import { checkScript, nodePort, parseCheck, startScript, stopScript, verifyScript, type NodeIdentity } from '../fleet/remote';
import type { BootstrapSpec } from '../core/fleet/types';
import type { SshEndpoint } from '../core/provider';
import { keyTypeOfBlob, type SshIdentity } from './ssh-identity';

export interface BootstrapTarget {
  endpoint: SshEndpoint;
  /** `<type> <base64>` the launch pinned; the connection is refused when the node presents another. */
  hostKey?: string;
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

class SshUnreachable extends Error {}

interface Ran {
  code: number | null;
  out: string;
}

function exec(conn: Client, script: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    conn.exec('sh -s', (err, stream: ClientChannel) => {
      if (err) return reject(err);
      let out = '';
      stream.on('data', (d: Buffer) => {
        if (out.length < OUTPUT_CAP) out += d.toString('utf8');
      });
      stream.stderr.resume();
      stream.on('close', (code: number | null) => resolve({ code, out }));
      stream.end(`${script}\n`);
    });
  });
}

/** Connect with the worker's key, run `fn`, always close. Connection problems throw SshUnreachable. */
function withSsh<T>(t: BootstrapTarget, identity: SshIdentity, fn: (conn: Client) => Promise<T>, timeoutMs = 15_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const conn = new Client();
    let settled = false;
    const finish = (err: unknown, v?: T): void => {
      if (settled) return;
      settled = true;
      conn.end();
      if (err) reject(err instanceof Error ? err : new Error('ssh session failed'));
      else resolve(v as T);
    };
    conn.on('ready', () => {
      fn(conn).then((v) => finish(undefined, v), (e: unknown) => finish(e));
    });
    conn.on('error', (err: Error) => finish(new SshUnreachable(`${t.endpoint.host}:${t.endpoint.port}: ${err.message}`)));
    conn.on('close', () => finish(new SshUnreachable(`${t.endpoint.host}:${t.endpoint.port}: connection closed`)));
    conn.connect({
      host: t.endpoint.host,
      port: t.endpoint.port,
      username: t.endpoint.user ?? 'root',
      privateKey: identity.privateKey,
      readyTimeout: timeoutMs,
      hostVerifier: (key: Buffer) => t.hostKey === undefined || t.hostKey === `${keyTypeOfBlob(key)} ${key.toString('base64')}`,
    });
  });
}

/** TCP connect from the node to 127.0.0.1:port; with `path`, an HTTP GET answered 2xx/3xx. */
function probePort(conn: Client, port: number, path?: string): Promise<boolean> {
  return new Promise((resolve) => {
    conn.forwardOut('127.0.0.1', 0, '127.0.0.1', port, (err, stream) => {
      if (err) return resolve(false);
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
  });
}

const fatal = (message: string): ApplicationFailure => ApplicationFailure.create({ type: FAILURE_TYPES.BootstrapFailed, message, nonRetryable: true });
const notReady = (message: string): ApplicationFailure => ApplicationFailure.create({ type: FAILURE_TYPES.NotReady, message });

/** SSH not reachable yet / any more: retryable (the activity's retry policy decides). */
function translate(err: unknown): never {
  if (err instanceof ApplicationFailure) throw err;
  const message = err instanceof Error ? err.message : String(err);
  throw ApplicationFailure.create({ type: FAILURE_TYPES.SshNotReady, message });
}

export function createBootstrapActivities(deps: { ssh: SshIdentity; now?: () => number }) {
  const now = deps.now ?? Date.now;
  const run = async (t: BootstrapTarget, script: string): Promise<Ran> => {
    const r = await withSsh(t, deps.ssh, (c) => exec(c, script)).catch(translate);
    if (r.code === 97) throw fatal(`cannot use the bootstrap directory on ${t.node.node}`);
    return r;
  };

  return {
    /** Fresh log and helper files, then each verify command in order (their output goes to the log). */
    async bootstrapVerify(t: BootstrapTarget): Promise<BootstrapStep> {
      const r = await run(t, verifyScript(t.spec, t.node));
      const failedAt = /verify-failed (\d+) (\d+)/.exec(r.out);
      if (failedAt) throw fatal(`verify command #${Number(failedAt[1]) + 1} exited ${failedAt[2]} (see \`provision logs ${t.node.node}\`)`);
      if (!r.out.includes('verify-ok')) throw notReady(`verify did not finish (exit ${r.code})`);
      return { stage: 'verified', at: now() };
    },

    /** Start the start command detached (idempotent: a running one is kept). */
    async bootstrapStart(t: BootstrapTarget): Promise<BootstrapStep> {
      const r = await run(t, startScript(t.spec, t.node.node));
      if (!/^(started|running) \d+/m.test(r.out)) throw notReady(`start did not report a process (exit ${r.code})`);
      return { stage: 'started', at: now() };
    },

    /** NotReady (retryable: the retry policy polls) until the ready condition holds; fatal when the start command exited non-zero. */
    async bootstrapAwaitReady(t: BootstrapTarget): Promise<BootstrapStep> {
      const ready = t.spec.ready;
      const port = 'http' in ready ? (ready.http.port ?? nodePort(t.spec, t.node.index)) : 'tcp' in ready ? (ready.tcp.port ?? nodePort(t.spec, t.node.index)) : undefined;
      const seen = await withSsh(t, deps.ssh, async (c) => {
        const facts = parseCheck((await exec(c, checkScript(t.spec, t.node.node))).out);
        if (!facts) return undefined;
        if (facts.exit !== undefined && facts.exit !== 0) return { facts, ok: false };
        const ok = 'command' in ready ? facts.commandReady === true : port !== undefined && (await probePort(c, port, 'http' in ready ? (ready.http.path ?? '/') : undefined));
        return { facts, ok };
      }).catch(translate);
      if (!seen) throw fatal(`bootstrap state missing on ${t.node.node} (was it started?)`);
      const { facts, ok } = seen;
      const seqs = { lastStdoutSeq: facts.lastStdoutSeq, lastStderrSeq: facts.lastStderrSeq };
      if (facts.exit !== undefined && facts.exit !== 0) throw fatal(`start command exited ${facts.exit} (stdout #${facts.lastStdoutSeq}, stderr #${facts.lastStderrSeq})`);
      if (!ok) throw notReady(`not ready yet (stdout #${facts.lastStdoutSeq}, stderr #${facts.lastStderrSeq}${facts.alive ? '' : ', start command not running'})`);
      return { stage: 'ready', ...seqs, at: now() };
    },

    /**
     * Stop the start command's process group. A node that stays unreachable after a few tries
     * reports `unreachable` (a VM that cannot be reached cannot be cleaned by SSH; its teardown follows).
     */
    async bootstrapStop(t: BootstrapTarget): Promise<BootstrapStep> {
      try {
        const r = await withSsh(t, deps.ssh, (c) => exec(c, stopScript(t.spec, t.node.node)));
        return { stage: 'stopped', at: now(), detail: /stopped|gone|none/.exec(r.out)?.[0] ?? `exit ${r.code}` };
      } catch (err) {
        if (err instanceof SshUnreachable && Context.current().info.attempt >= 3) return { stage: 'stopped', at: now(), detail: 'unreachable' };
        return translate(err);
      }
    },
  };
}
