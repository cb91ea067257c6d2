import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors';
import {
  DEFAULT_GATE_SAMPLE,
  GATED_WORKFLOW_TYPES,
  gatedTypes,
  gateRun,
  gateSettings,
  gateVerdict,
  judgeReplay,
  openWorkflowsQuery,
  passedLine,
  refusalIn,
  refusalLines,
  sampleOpen,
  type GateFinding,
} from '../../../src/core/replay-gate';

const on = { enabled: true, sample: 20 };

describe('gate settings', () => {
  it('defaults to on with a sample of 20', () => {
    expect(gateSettings({})).toEqual({ enabled: true, sample: DEFAULT_GATE_SAMPLE });
    expect(gateSettings({ GPUPROV_REPLAY_GATE: 'on', GPUPROV_REPLAY_GATE_SAMPLE: '5' })).toEqual({ enabled: true, sample: 5 });
    expect(gateSettings({ GPUPROV_REPLAY_GATE: 'off' }).enabled).toBe(false);
  });
  it.each([
    ['GPUPROV_REPLAY_GATE', 'no'],
    ['GPUPROV_REPLAY_GATE_SAMPLE', '0'],
    ['GPUPROV_REPLAY_GATE_SAMPLE', '2.5'],
    ['GPUPROV_REPLAY_GATE_SAMPLE', '-3'],
    ['GPUPROV_REPLAY_GATE_SAMPLE', '1001'],
  ])('%s=%s is bad input naming the variable and the fix', (name, value) => {
    const err = (() => {
      try {
        gateSettings({ [name]: value });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ field: name, suggestion: expect.stringContaining(`set ${name}`) });
  });
});

describe('whether the gate runs', () => {
  it.each([
    [{ enabled: false, sample: 20 }, true, 'h', 'h', 'off'],
    [on, true, 'h', 'h', 'same-bundle'],
    [on, true, 'old', 'h', 'run'],
    [on, true, undefined, 'h', 'run'],
    [on, false, 'h', 'h', 'run'],
  ] as const)('%o embedded=%s last=%s bundle=%s → %s', (s, embedded, lastGoodHash, bundleHash, row) => {
    expect(gateRun(s, { embedded, bundleHash, ...(lastGoodHash ? { lastGoodHash } : {}) })).toBe(row);
  });
});

describe('what is sampled', () => {
  it('asks visibility for the running workflows of one type on one task queue, quoting both', () => {
    expect(openWorkflowsQuery('vmWorkflow', 'gpuprov')).toBe('ExecutionStatus="Running" AND WorkflowType="vmWorkflow" AND TaskQueue="gpuprov"');
    expect(openWorkflowsQuery('vmWorkflow', 'q"x')).toContain('TaskQueue="q\\"x"');
  });
  it('takes the most recently started, ties by workflow id', () => {
    const w = (id: string, startTime: number) => ({ workflowId: id, runId: `r-${id}`, type: 'vmWorkflow', startTime });
    expect(sampleOpen([w('a', 1), w('c', 3), w('b', 3), w('d', 2)], 3).map((x) => x.workflowId)).toEqual(['b', 'c', 'd']);
  });
  it('covers every workflow type the worker registers', () => {
    const index = readFileSync(join(__dirname, '..', '..', '..', 'src', 'workflows', 'index.ts'), 'utf8');
    const exported = [...index.matchAll(/export \{([^}]*)\}/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()));
    expect([...GATED_WORKFLOW_TYPES].sort()).toEqual(exported.filter(Boolean).sort());
  });
  it('replays every type on an unversioned worker, only the AUTO_UPGRADE ones on a versioned worker', () => {
    expect(gatedTypes(false)).toEqual(GATED_WORKFLOW_TYPES);
    expect([...gatedTypes(true)].sort()).toEqual([
      'accountWatcherWorkflow',
      'capacityMemoryWorkflow',
      'deploymentRecordWorkflow',
      'fleetWorkflow',
      'ledgerPageWorkflow',
    ]);
  });
});

describe('judging the replays', () => {
  it.each([
    [{ fetched: true }, 'ok'],
    [{ fetched: true, errorName: 'DeterminismViolationError', reason: 'x' }, 'nondeterministic'],
    [{ fetched: true, errorName: 'ReplayError', reason: 'x' }, 'replay-failed'],
    [{ fetched: false, reason: 'timed out' }, 'unfetched'],
  ] as const)('%o → %s', (a, outcome) => {
    expect(judgeReplay(a)).toBe(outcome);
  });

  const f = (workflowId: string, outcome: GateFinding['outcome'], reason?: string): GateFinding => ({
    workflowId,
    runId: `run-${workflowId}`,
    type: 'vmWorkflow',
    startTime: 0,
    outcome,
    ...(reason ? { reason } : {}),
  });

  it('passes nothing open, and replays that all went well', () => {
    expect(gateVerdict([]).refused).toBe(false);
    expect(gateVerdict([f('vm-a', 'ok')]).refused).toBe(false);
  });
  it('passes with history fetches that failed, and says so', () => {
    const v = gateVerdict([f('vm-a', 'ok'), f('vm-b', 'unfetched', 'no answer within 30 s')]);
    expect(v.refused).toBe(false);
    expect(passedLine(v, 'gpuprov')).toContain('1 open workflow(s) replayed');
    expect(passedLine(v, 'gpuprov')).toContain('vm-b: no answer within 30 s');
  });
  it('refuses a determinism failure, naming the workflow, its run, type, reason and the fix', () => {
    const v = gateVerdict([f('vm-a', 'ok'), f('vm-b', 'nondeterministic', 'Nondeterminism error:\n timer vs activity')]);
    expect(v.refused).toBe(true);
    const text = refusalLines(v, 'gpuprov').join('\n');
    expect(text).toContain('vmWorkflow vm-b (run run-vm-b): determinism failure: Nondeterminism error: timer vs activity');
    expect(text).not.toContain('vm-a');
    expect(text).toContain('src/core/patches.ts');
    expect(text).toContain('GPUPROV_REPLAY_GATE=off');
  });
  it('refuses any other replay failure and a type it could not list', () => {
    expect(gateVerdict([f('vm-a', 'replay-failed', 'boom')]).refused).toBe(true);
    const v = gateVerdict([], [{ type: 'fleetWorkflow', reason: 'unavailable' }]);
    expect(v.refused).toBe(true);
    expect(refusalLines(v, 'q').join('\n')).toContain('fleetWorkflow: could not list its open workflows: unavailable');
  });
  it('finds the refusal in a worker log among JSON lines', () => {
    const lines = refusalLines(gateVerdict([f('vm-b', 'nondeterministic', 'why')]), 'gpuprov');
    const log = ['{"level":"INFO","message":"replay gate: refused"}', ...lines, '{"level":"INFO","message":"after"}'].join('\n');
    expect(refusalIn(log)).toBe(lines.join('\n'));
    expect(refusalIn(lines.join('\n'))).toBe(lines.join('\n'));
    expect(refusalIn('{"message":"nothing"}')).toBeUndefined();
  });
});
