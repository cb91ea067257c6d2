/**
 * The replay gate (decisions in src/core/replay-gate.ts): before a worker process polls, the most
 * recently started open workflows of every gpuprov workflow type on its task queue are fetched from
 * the server and replayed against the bundle the worker is about to run. A determinism failure (or
 * any replay failure) throws {@link ReplayGateRefused}: the worker process prints it and exits
 * REPLAY_GATE_EXIT (3) without polling. The embedded default's worker keeps the hash of the last
 * bundle that passed under `<stateDir>/run/`, and runs the gate only when its bundle changed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client, HistoryAndWorkflowId } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import {
  GATE_FETCH_TIMEOUT_MS,
  GATED_WORKFLOW_TYPES,
  gateRun,
  gateSettings,
  gateVerdict,
  judgeReplay,
  openWorkflowsQuery,
  passedLine,
  refusalLines,
  sampleOpen,
  type GateFinding,
  type GateVerdict,
  type OpenExecution,
  type ReplayAttempt,
} from '../core/replay-gate';
import { stateDir } from '../paths';
import type { GpuprovLogger } from '../telemetry/logger';
import { bundleHash } from './workflow-bundle';

/** Thrown when the gate refuses; `lines` say which workflows and what to do. */
export class ReplayGateRefused extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
    this.name = 'ReplayGateRefused';
  }
}

export interface ReplayGateCheck {
  client: Client;
  taskQueue: string;
  /** The workflow bundle (`bundleWorkflowCode` output) the worker will run. */
  bundlePath: string;
  /** Open workflows replayed per type (GPUPROV_REPLAY_GATE_SAMPLE). */
  sample: number;
  /** Per history fetch and per type's listing; default GATE_FETCH_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Default: every type the worker registers (GATED_WORKFLOW_TYPES). */
  types?: readonly string[];
  /** The worker's payload codec (src/codec): encrypted histories replay only through it. */
  dataConverter?: DataConverter;
}

/** `p`, or a rejection after `ms` (`p` runs on; its result is dropped). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const FETCH_CONCURRENCY = 8;

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function listOpen(client: Client, type: string, taskQueue: string, sample: number): Promise<OpenExecution[]> {
  const out: OpenExecution[] = [];
  // Visibility lists open workflows newest first: the first `sample` are the ones to replay.
  for await (const w of client.workflow.list({ query: openWorkflowsQuery(type, taskQueue), pageSize: sample })) {
    out.push({ workflowId: w.workflowId, runId: w.runId, type: w.type, startTime: w.startTime.getTime() });
    if (out.length >= sample) break;
  }
  return out;
}

/** Lists, fetches and replays; the verdict of src/core/replay-gate.ts. Never waits on one call longer than `timeoutMs`. */
export async function runReplayGate(o: ReplayGateCheck): Promise<GateVerdict> {
  const timeoutMs = o.timeoutMs ?? GATE_FETCH_TIMEOUT_MS;
  const unlisted: { type: string; reason: string }[] = [];
  const sampled: OpenExecution[] = [];
  for (const type of o.types ?? GATED_WORKFLOW_TYPES) {
    try {
      sampled.push(...sampleOpen(await within(listOpen(o.client, type, o.taskQueue, o.sample), timeoutMs, `listing open ${type}s`), o.sample));
    } catch (err) {
      unlisted.push({ type, reason: message(err) });
    }
  }
  const attempts = new Map<string, ReplayAttempt>();
  const fetched: HistoryAndWorkflowId[] = [];
  // A few at a time: up to sample × types histories, each possibly large.
  for (let i = 0; i < sampled.length; i += FETCH_CONCURRENCY) {
    await Promise.all(
      sampled.slice(i, i + FETCH_CONCURRENCY).map(async (w) => {
        try {
          const history = await within(o.client.workflow.getHandle(w.workflowId, w.runId).fetchHistory(), timeoutMs, `fetching the history of ${w.workflowId}`);
          fetched.push({ workflowId: w.workflowId, history });
        } catch (err) {
          attempts.set(w.workflowId, { fetched: false, reason: message(err) });
        }
      }),
    );
  }
  if (fetched.length) {
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { codePath: o.bundlePath }, replayName: 'gpuprov-replay-gate', ...(o.dataConverter ? { dataConverter: o.dataConverter } : {}) },
      fetched,
    )) {
      const errorName = r.error === undefined ? undefined : r.error instanceof DeterminismViolationError ? 'DeterminismViolationError' : r.error.name;
      attempts.set(r.workflowId, { fetched: true, ...(errorName ? { errorName, reason: r.error?.message } : {}) });
    }
  }
  const findings: GateFinding[] = sampled.map((w) => {
    const a = attempts.get(w.workflowId) ?? { fetched: true, errorName: 'ReplayError', reason: 'the replayer returned no result for it' };
    return { ...w, outcome: judgeReplay(a), ...(a.reason !== undefined ? { reason: a.reason } : {}) };
  });
  return gateVerdict(findings, unlisted);
}

/** Where the embedded default's worker keeps the hash of the last bundle that passed the gate. */
export const lastGoodBundleFile = (env: NodeJS.ProcessEnv): string => path.join(stateDir(env), 'run', 'replay-gate-last-good-bundle');

export interface ReplayGateOptions {
  client: Client;
  taskQueue: string;
  bundlePath: string | Promise<string>;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Told loudly when the gate is switched off. */
  warn: (line: string) => void;
  /** The worker's payload codec, when payloads are encrypted. */
  dataConverter?: DataConverter;
  /** The types to replay (`gatedTypes`: a versioned worker's AUTO_UPGRADE types); default all. */
  types?: readonly string[];
}

/**
 * The worker process's gate, run once before anything polls (src/worker.ts): settles when the
 * worker may poll, throws {@link ReplayGateRefused} when it must not, InputError on a bad setting.
 */
export async function replayGate(o: ReplayGateOptions): Promise<void> {
  const settings = gateSettings(o.env);
  const embedded = Boolean(o.env.GPUPROV_EMBEDDED_ADDRESS);
  const bundlePath = await o.bundlePath;
  const hash = bundleHash(bundlePath);
  const lastGood = embedded ? readOrUndefined(lastGoodBundleFile(o.env)) : undefined;
  const row = gateRun(settings, { embedded, bundleHash: hash, ...(lastGood !== undefined ? { lastGoodHash: lastGood } : {}) });
  if (row === 'off') {
    o.warn(
      `replay gate: OFF (GPUPROV_REPLAY_GATE=off): open workflows on task queue ${o.taskQueue} were NOT replayed against this code; a determinism failure will show as failing workflow tasks`,
    );
    return;
  }
  if (row === 'same-bundle') return o.log('replay gate: this bundle passed before; not replayed again');
  const verdict = await runReplayGate({
    client: o.client,
    taskQueue: o.taskQueue,
    bundlePath,
    sample: settings.sample,
    ...(o.dataConverter ? { dataConverter: o.dataConverter } : {}),
    ...(o.types ? { types: o.types } : {}),
  });
  if (verdict.refused) throw new ReplayGateRefused(refusalLines(verdict, o.taskQueue));
  o.log(passedLine(verdict, o.taskQueue));
  if (embedded) {
    fs.mkdirSync(path.dirname(lastGoodBundleFile(o.env)), { recursive: true });
    fs.writeFileSync(lastGoodBundleFile(o.env), hash);
  }
}

function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Prints a refusal for the person upgrading: one log line with the findings, then the plain lines on
 * stderr (last in the daemon's log, where `provision` reads them). False for any other error.
 */
export function reportRefusal(err: unknown, logger: GpuprovLogger | undefined): boolean {
  if (!(err instanceof ReplayGateRefused)) return false;
  logger?.announce('replay gate: refused; this worker will not poll', { component: 'gpuprov', refusal: err.lines }, 'ERROR');
  process.stderr.write(`${err.lines.join('\n')}\n`);
  return true;
}
