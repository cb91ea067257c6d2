/**
 * The spot invariants can fail: a preemption with a notice under `--recover` (the old instance
 * retiring beside its replacement, then deleted) passes; made-up bad traces are caught: a VM
 * neither Ready again nor lost, Ready again only on an instance the cloud does not bill, lost
 * under `--recover` without saying why, three billed at once during a replacement, two billed at
 * once without a preemption. And the trace alphabet draws the spot part and shrinks it.
 */
import { describe, expect, it } from 'vitest';
import type { Fact, RunFacts } from '../../chaos/history';
import type { CloudCall, CloudInstance, Evidence, PreemptionPlayed, Sample } from '../../chaos/evidence';
import { SPOT_INVARIANTS, preemptionOutcomes } from '../../chaos/invariants-spot';
import { generate, shrinkCandidates, size, type Trace } from '../../chaos/trace';

const VM = 'c7-0';
const inst = (id: string, o: Partial<CloudInstance> = {}): CloudInstance => ({ id, vmName: VM, region: 'fake-a', instanceType: 'gpu-1', ...o });
const create = (id: string, at: number): CloudCall => ({ primitive: 'create', vmName: VM, region: 'fake-a', instanceType: 'gpu-1', id, at });
const del = (id: string, at: number): CloudCall => ({ primitive: 'delete', vmName: VM, region: 'fake-a', removed: [{ id }], at });
const sample = (t: number, stage: string, ids: string[], live: CloudInstance[]): Sample => ({ t, vm: VM, stage, instanceIds: ids, quiet: false, live });

const trace: Trace = {
  seed: 7,
  level: 'fake',
  bootMs: 0,
  faults: [],
  vms: [{ vm: 0, startAfterMs: 0, op: { op: 'preempt-when-ready', noticeMs: 20_000 }, duplicateStart: false, restart: false, spot: 'only', recover: true }],
  kills: [],
};

const closed = (runId: string, status: Fact & { e: 'closed' }): RunFacts => ({ workflowId: `vm-${VM}`, runId, vmName: VM, facts: [status] });

/** Ready on fake-1; a notice at 10 s (deadline 30 s); the replacement fake-2 boots beside it, is Ready at 15 s; fake-1 is deleted. */
function replaced(): Evidence {
  const preempted: PreemptionPlayed = { id: 'fake-1', t: 10_000, noticeAt: 10_000, reclaimAt: 30_000, noticeMs: 20_000, recover: true };
  return {
    trace,
    mutateMaxAttempts: 3,
    runs: [
      {
        ...closed('run-00000001', { e: 'closed', status: 'continued' }),
        facts: [
          { e: 'stage', stage: 'lost', atMs: 10_400 },
          { e: 'closed', status: 'continued' },
        ],
      },
      closed('run-00000002', { e: 'closed', status: 'completed', result: { stage: 'terminated', instanceIds: [], attempts: [] } }),
    ],
    samples: [
      sample(5_000, 'ready', ['fake-1'], [inst('fake-1')]),
      sample(12_000, 'creating', [], [inst('fake-1', { preempted: true }), inst('fake-2')]),
      sample(15_500, 'ready', ['fake-2'], [inst('fake-2')]),
    ],
    calls: [create('fake-1', 1_000), create('fake-2', 11_000), del('fake-1', 15_200), del('fake-2', 40_000)],
    everSeen: { [VM]: ['fake-1', 'fake-2'] },
    finalLive: [],
    finalSideResources: [],
    unconverged: [],
    closedWhileHolding: [],
    duplicateStartsAccepted: [],
    vanished: [],
    preempted: { [VM]: preempted },
    disruptions: 0,
    replayErrors: {},
    secrets: {},
  };
}

const judgeSpot = (e: Evidence): string[] => SPOT_INVARIANTS.flatMap((i) => i.check(e)).map((v) => `${v.invariant}: ${v.detail}`);

describe('spot invariants', () => {
  it('a replacement under --recover passes: Ready again on fake-2, never more than two billed', () => {
    const e = replaced();
    expect(judgeSpot(e)).toEqual([]);
    expect(preemptionOutcomes(e)).toEqual({ [VM]: 'ready' });
  });

  it('without a notice and without --recover: ended lost passes', () => {
    const e = replaced();
    e.preempted![VM] = { ...e.preempted![VM]!, reclaimAt: 10_000, noticeMs: 0, recover: false };
    e.samples = e.samples.slice(0, 1);
    e.calls = [create('fake-1', 1_000), del('fake-1', 11_000)];
    e.runs = [
      {
        ...e.runs[0]!,
        facts: [
          { e: 'stage', stage: 'lost', atMs: 10_300 },
          { e: 'closed', status: 'completed', result: { stage: 'lost', instanceIds: [] } },
        ],
      },
    ];
    expect(judgeSpot(e)).toEqual([]);
    expect(preemptionOutcomes(e)).toEqual({ [VM]: 'lost' });
  });

  it('catches a preempted VM neither Ready again nor lost', () => {
    const e = replaced();
    e.samples = e.samples.slice(0, 2);
    expect(judgeSpot(e)).toEqual([expect.stringMatching(/^preempted-ready-or-lost: preempted fake-1 \(notice 20000 ms, --recover\): neither/)]);
  });

  it('catches Ready again on an instance the cloud does not bill (stopped) or does not list', () => {
    const e = replaced();
    e.samples[2] = sample(15_500, 'ready', ['fake-2'], [inst('fake-2', { billed: false })]);
    expect(judgeSpot(e).map((x) => x.split(':')[0])).toEqual(['preempted-ready-or-lost']);
    e.samples[2] = sample(15_500, 'ready', ['fake-2'], []);
    expect(judgeSpot(e).map((x) => x.split(':')[0])).toEqual(['preempted-ready-or-lost']);
    // Ready "again" on the preempted instance itself is not a recovery.
    e.samples[2] = sample(15_500, 'ready', ['fake-1'], [inst('fake-1', { preempted: true })]);
    expect(judgeSpot(e).map((x) => x.split(':')[0])).toEqual(['preempted-ready-or-lost']);
  });

  it('catches lost under --recover without saying why it gave up; passes it with gaveUp', () => {
    const e = replaced();
    e.samples = e.samples.slice(0, 2);
    const lost = (gaveUp?: string): RunFacts => ({
      ...e.runs[0]!,
      facts: [
        { e: 'stage', stage: 'lost', atMs: 10_300 },
        { e: 'closed', status: 'completed', result: { stage: 'lost', instanceIds: [], recovered: { count: 0, ...(gaveUp ? { gaveUp } : {}) } } },
      ],
    });
    e.runs = [lost()];
    expect(judgeSpot(e)).toEqual([expect.stringMatching(/ended lost under --recover without saying why/)]);
    e.runs = [lost('relaunched 5 times already (the bound is 5)')];
    expect(judgeSpot(e)).toEqual([]);
  });

  it('a relaunch under --recover that ends failed is visible: it passes (failure-justified judges the faults)', () => {
    const e = replaced();
    e.samples = e.samples.slice(0, 2);
    e.runs[1] = closed('run-00000002', { e: 'closed', status: 'failed', failureType: 'LaunchFailed' });
    expect(judgeSpot(e)).toEqual([]);
    expect(preemptionOutcomes(e)).toEqual({ [VM]: 'relaunch-failed' });
  });

  it('catches three billed at once during a replacement (over the call log)', () => {
    const e = replaced();
    e.calls!.splice(2, 0, create('fake-3', 12_000), del('fake-3', 13_000));
    expect(judgeSpot(e)).toEqual([
      expect.stringMatching(/^billed-per-name: cloud: 3 billed at once \(fake-1, fake-2, fake-3\), at most 2 while a preempted one is replaced/),
    ]);
  });

  it('after the deadline the preempted instance is no longer billed: a replacement created then has room', () => {
    const e = replaced();
    e.preempted![VM] = { ...e.preempted![VM]!, reclaimAt: 12_000 };
    e.calls!.splice(2, 0, create('fake-3', 12_500), del('fake-3', 13_000));
    expect(judgeSpot(e)).toEqual([]);
  });

  it('catches two billed at once without a preemption (--parallel 1), over the call log and in a sample', () => {
    const e = replaced();
    e.preempted = {};
    e.samples = [];
    expect(judgeSpot(e)).toEqual([expect.stringMatching(/^billed-per-name: cloud: 2 billed at once \(fake-1, fake-2\), at most 1$/)]);
    e.calls = [];
    e.samples = [sample(12_000, 'creating', [], [inst('fake-1'), inst('fake-2')])];
    expect(judgeSpot(e)).toEqual([expect.stringMatching(/^billed-per-name: sampled: fake-1, fake-2/)]);
    // A stopped one is listed but not billed.
    e.samples = [sample(12_000, 'creating', [], [inst('fake-1', { preempted: true, billed: false }), inst('fake-2')])];
    expect(judgeSpot(e)).toEqual([]);
  });
});

describe('the spot alphabet', () => {
  it('draws spot, --recover and preemptions with and without a notice at level fake only; a --recover VM never vanishes', () => {
    const vms = Array.from({ length: 256 }, (_, i) => generate(i + 1, 'fake')).flatMap((t) => t.vms);
    const preempts = vms.flatMap((v) => (v.op.op === 'preempt-when-ready' ? [v.op.noticeMs] : []));
    expect(preempts.some((ms) => ms === 0)).toBe(true);
    expect(preempts.some((ms) => ms > 0 && ms <= 3_000)).toBe(true);
    expect(preempts.some((ms) => ms >= 8_000)).toBe(true);
    expect(new Set(vms.flatMap((v) => (v.spot ? [v.spot] : [])))).toEqual(new Set(['only', 'auto']));
    expect(vms.every((v) => v.op.op !== 'preempt-when-ready' || v.spot)).toBe(true);
    expect(vms.filter((v) => v.recover).every((v) => v.op.op !== 'vanish-when-ready')).toBe(true);
    expect(vms.some((v) => v.recover && v.parallel !== undefined)).toBe(true);
    expect(vms.some((v) => v.op.op === 'preempt-when-ready' && !v.recover)).toBe(true);
    const local = Array.from({ length: 64 }, (_, i) => generate(i + 1, 'local')).flatMap((t) => t.vms);
    expect(local.some((v) => v.spot || v.recover || v.op.op === 'preempt-when-ready')).toBe(false);
  });

  it('shrinks the spot part: no notice, no --recover, no spot (then nothing to preempt)', () => {
    const cs = shrinkCandidates(trace);
    for (const c of cs) expect(size(c)).toBeLessThan(size(trace));
    const vm0 = cs.map((c) => c.vms[0]!);
    expect(vm0).toContainEqual(expect.objectContaining({ op: { op: 'preempt-when-ready', noticeMs: 0 }, recover: true }));
    expect(vm0.some((v) => v.spot === 'only' && v.recover === undefined && v.op.op === 'preempt-when-ready')).toBe(true);
    expect(vm0.some((v) => v.spot === undefined && v.recover === undefined && v.op.op === 'none')).toBe(true);
  });
});
