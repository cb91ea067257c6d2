/**
 * The replay gate's decisions: before a worker takes any workflow task on new workflow code, the
 * recent histories of every open gpuprov workflow are replayed against that code; a determinism
 * failure keeps the worker from polling. The I/O (listing, fetching, replaying) is in
 * src/server/replay-gate.ts; this file decides whether to run, what to sample and what the
 * results mean.
 *
 * Whether the gate runs ({@link gateRun}):
 *
 * | GPUPROV_REPLAY_GATE | worker                     | last good bundle hash | row                 |
 * |---------------------|----------------------------|-----------------------|---------------------|
 * | `off`               | any                        | any                   | `off` (logged loud) |
 * | unset, `on`         | the embedded default's     | equals this bundle's  | `same-bundle`       |
 * | unset, `on`         | the embedded default's     | absent or different   | `run`               |
 * | unset, `on`         | any other (a cluster's)    | any                   | `run`               |
 * | anything else       | any                        | any                   | InputError (exit 2) |
 *
 * One sampled workflow's outcome ({@link judgeReplay}):
 *
 * | what happened                                   | outcome            | blocks |
 * |-------------------------------------------------|--------------------|--------|
 * | replayed without error                          | `ok`               | no     |
 * | DeterminismViolationError                       | `nondeterministic` | yes    |
 * | any other replay error (the code throws, …)     | `replay-failed`    | yes    |
 * | its history not fetched (error, or timed out)   | `unfetched`        | no: reported; nothing was learnt |
 *
 * Which types are replayed ({@link gatedTypes}):
 *
 * | worker                                   | types replayed                              | why |
 * |------------------------------------------|---------------------------------------------|-----|
 * | unversioned (the embedded default, …)    | every type it registers                     | it takes every open workflow's next task |
 * | a Worker Deployment Version (versioning) | the AUTO_UPGRADE types of src/core/versioning.ts | a PINNED run stays on the version that began it (its continue-as-new starts a new history) |
 *
 * The verdict ({@link gateVerdict}): refused when any outcome blocks or a type's open workflows
 * could not be listed (no evidence the code is safe: the opt-out is named); else passed, naming
 * what was replayed and what could not be fetched. A refusal exits {@link REPLAY_GATE_EXIT} (3).
 */
import { InputError } from './errors';
import { WORKFLOW_VERSIONING, type WorkflowTypeName } from './versioning';

/** The worker process's exit code when the gate refuses (2 is bad input, 1 any other failure). */
export const REPLAY_GATE_EXIT = 3;

/** Every workflow type the worker registers: the versioning table's rows (src/workflows/index.ts declares them all). */
export const GATED_WORKFLOW_TYPES = Object.keys(WORKFLOW_VERSIONING) as readonly WorkflowTypeName[];

/** The third table: the types whose open runs this worker's code would continue. */
export function gatedTypes(versionedWorker: boolean): readonly WorkflowTypeName[] {
  return versionedWorker ? GATED_WORKFLOW_TYPES.filter((t) => WORKFLOW_VERSIONING[t] === 'AUTO_UPGRADE') : GATED_WORKFLOW_TYPES;
}

export const DEFAULT_GATE_SAMPLE = 20;
const MAX_GATE_SAMPLE = 1_000;
/** How long one history fetch (or one type's listing) may take before it is reported, not awaited. */
export const GATE_FETCH_TIMEOUT_MS = 30_000;

/** The gate's settings, from GPUPROV_REPLAY_GATE and GPUPROV_REPLAY_GATE_SAMPLE. */
export interface GateSettings {
  enabled: boolean;
  /** Open workflows replayed per type, the most recently started first. */
  sample: number;
}

/** Reads the settings; a bad value is an InputError naming the variable and the fix. */
export function gateSettings(env: Readonly<Record<string, string | undefined>>): GateSettings {
  const mode = env.GPUPROV_REPLAY_GATE ?? '';
  if (!['', 'on', 'off'].includes(mode)) {
    throw new InputError('GPUPROV_REPLAY_GATE', `GPUPROV_REPLAY_GATE=${mode} is neither on nor off`, 'set GPUPROV_REPLAY_GATE to on (the default) or off');
  }
  const raw = env.GPUPROV_REPLAY_GATE_SAMPLE ?? '';
  const sample = raw === '' ? DEFAULT_GATE_SAMPLE : Number(raw);
  if (!/^\d*$/.test(raw) || !Number.isInteger(sample) || sample < 1 || sample > MAX_GATE_SAMPLE) {
    throw new InputError(
      'GPUPROV_REPLAY_GATE_SAMPLE',
      `GPUPROV_REPLAY_GATE_SAMPLE=${raw} is not a whole number from 1 to ${MAX_GATE_SAMPLE}`,
      `set GPUPROV_REPLAY_GATE_SAMPLE to how many open workflows of each type to replay (default ${DEFAULT_GATE_SAMPLE}), or unset it`,
    );
  }
  return { enabled: mode !== 'off', sample };
}

export type GateRun = 'run' | 'off' | 'same-bundle';

/** The first table's row: whether the gate replays anything before this worker polls. */
export function gateRun(s: GateSettings, o: { embedded: boolean; lastGoodHash?: string; bundleHash: string }): GateRun {
  if (!s.enabled) return 'off';
  if (o.embedded && o.lastGoodHash === o.bundleHash) return 'same-bundle';
  return 'run';
}

/** A string as a visibility query literal. */
const literal = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The visibility query for the open workflows of one type on one task queue. */
export function openWorkflowsQuery(type: string, taskQueue: string): string {
  return `ExecutionStatus="Running" AND WorkflowType=${literal(type)} AND TaskQueue=${literal(taskQueue)}`;
}

/** An open workflow as visibility lists it. */
export interface OpenExecution {
  workflowId: string;
  runId: string;
  type: string;
  /** Epoch ms. */
  startTime: number;
}

/** The `n` most recently started of `open` (ties by workflow id, so the choice is stable). */
export function sampleOpen(open: readonly OpenExecution[], n: number): OpenExecution[] {
  return [...open].sort((a, b) => b.startTime - a.startTime || a.workflowId.localeCompare(b.workflowId)).slice(0, n);
}

/** What happened to one sampled workflow, as the I/O side saw it. */
export type ReplayAttempt =
  | { fetched: false; reason: string }
  /** `errorName`: the replay error's class name (`DeterminismViolationError`, `ReplayError`, …); none = replayed. */
  | { fetched: true; errorName?: string; reason?: string };

export type ReplayOutcome = 'ok' | 'nondeterministic' | 'replay-failed' | 'unfetched';

/** The second table's row for one workflow. */
export function judgeReplay(a: ReplayAttempt): ReplayOutcome {
  if (!a.fetched) return 'unfetched';
  if (a.errorName === undefined) return 'ok';
  return a.errorName === 'DeterminismViolationError' ? 'nondeterministic' : 'replay-failed';
}

export const blocks = (o: ReplayOutcome): boolean => o === 'nondeterministic' || o === 'replay-failed';

/** One sampled workflow's result. */
export interface GateFinding extends OpenExecution {
  outcome: ReplayOutcome;
  /** The SDK's reason, or why the history was not fetched. */
  reason?: string;
}

export interface GateVerdict {
  refused: boolean;
  findings: GateFinding[];
  /** Types whose open workflows could not be listed, with why. */
  unlisted: { type: string; reason: string }[];
}

/** The verdict of the third paragraph of the header. */
export function gateVerdict(findings: GateFinding[], unlisted: { type: string; reason: string }[] = []): GateVerdict {
  return { refused: unlisted.length > 0 || findings.some((f) => blocks(f.outcome)), findings, unlisted };
}

const REFUSAL_HEAD = "replay gate: this worker's workflow code cannot continue";

/** What to do about a workflow the new code cannot replay. */
export const GATE_FIX =
  "guard the change with a patch (an id in src/core/patches.ts, asked for with patchedSince from src/workflows/patch.ts), or roll back to the code that recorded it; see README 'Upgrading workers: the replay gate'";

/** The lines a refusal prints: one block per failing workflow, then the fix and the opt-out. */
export function refusalLines(v: GateVerdict, taskQueue: string): string[] {
  const lines = [`${REFUSAL_HEAD} the open workflows on task queue ${taskQueue}; it will not poll.`];
  for (const f of v.findings.filter((x) => blocks(x.outcome))) {
    lines.push(
      `  ${f.type} ${f.workflowId} (run ${f.runId}): ${f.outcome === 'nondeterministic' ? 'determinism failure' : 'replay failed'}: ${oneLine(f.reason ?? 'no reason given')}`,
    );
  }
  for (const u of v.unlisted) lines.push(`  ${u.type}: could not list its open workflows: ${oneLine(u.reason)}`);
  if (v.findings.some((x) => blocks(x.outcome))) lines.push(`  fix: ${GATE_FIX}`);
  lines.push('  emergency only: GPUPROV_REPLAY_GATE=off starts the worker without this check (open workflows may then fail their tasks)');
  return lines;
}

/** The refusal's plain lines in a worker's output (the embedded daemon's log), or undefined. */
export function refusalIn(output: string): string | undefined {
  const at = output.lastIndexOf(`\n${REFUSAL_HEAD}`);
  const start = at >= 0 ? at + 1 : output.startsWith(REFUSAL_HEAD) ? 0 : -1;
  if (start < 0) return undefined;
  const lines = output.slice(start).split('\n');
  const end = lines.findIndex((l, i) => i > 0 && !l.startsWith('  '));
  return (end < 0 ? lines : lines.slice(0, end)).join('\n').trim();
}

/** The one line a passed gate logs. */
export function passedLine(v: GateVerdict, taskQueue: string): string {
  const ok = v.findings.filter((f) => f.outcome === 'ok').length;
  const unfetched = v.findings.filter((f) => f.outcome === 'unfetched');
  const tail = unfetched.length ? `; ${unfetched.length} not fetched (${unfetched.map((f) => `${f.workflowId}: ${oneLine(f.reason ?? '')}`).join('; ')})` : '';
  return `replay gate: passed on task queue ${taskQueue}: ${ok} open workflow(s) replayed against this code${tail}`;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim().slice(0, 500);
