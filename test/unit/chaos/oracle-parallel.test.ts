/**
 * The oracle on hedged launches (`--parallel 2`): a clean race (fake-a's first offer fails and is
 * compensated, its second starts, fake-b wins, the fake-a loser is cancelled and deleted before
 * Ready) passes every invariant written for serial attempts, read per lane; targeted corruptions
 * of it are caught, `no-loser-left` included.
 */
import { describe, expect, it } from 'vitest';
import type { Fact, RunFacts } from '../../chaos/history';
import { judge, type Evidence } from '../../chaos/oracle';
import type { Trace } from '../../chaos/trace';

type Of = { cloud: string; region: string; instanceType: string };
const offer = (region: string, instanceType: string): Of => ({ cloud: 'fake', region, instanceType });
const A1 = offer('fake-a', 'gpu-1');
const A2 = offer('fake-a', 'gpu-2');
const B1 = offer('fake-b', 'gpu-1');
const B2 = offer('fake-b', 'gpu-2');
const VM = 'c1-0';

interface Opts {
  /** Offers started in the first batch (default A1, B1) and the refill after A1 fails (default A2). */
  first?: [Of, Of];
  refill?: Of;
  /** Leave out the loser's release. */
  keepLoser?: boolean;
}

function build(o: Opts = {}): Fact[] {
  let id = 0;
  const f: Fact[] = [];
  const sched = (type: string, input: unknown[]): number => {
    const a = ++id;
    f.push({ e: 'activity', id: a, type, input });
    return a;
  };
  const done = (a: number, result: unknown = null): void => void f.push({ e: 'activityDone', id: a, result });
  const release = (of: { region: string }, ids: string[]): number =>
    sched('releaseAt', [{ at: { cloud: 'fake', region: of.region }, vmName: VM, instanceIds: ids, mode: 'full', pollIntervalMs: 200, deadlineAtMs: 0 }]);
  const [x, y] = o.first ?? [A1, B1];
  const refill = o.refill ?? A2;
  f.push({ e: 'stage', stage: 'planning' });
  done(sched('planOffers', [{}]), { offers: [A1, A2, B1, B2] });
  f.push({ e: 'stage', stage: 'creating' });
  const cx = sched('prepareAndCreate', [x, {}]);
  const cy = sched('prepareAndCreate', [y, {}]);
  f.push({ e: 'activityFailed', id: cx, failureType: 'Capacity' });
  const rx = release(x, []);
  done(cy, { instanceId: 'fake-2' });
  done(rx);
  const cr = sched('prepareAndCreate', [refill, {}]);
  done(sched('awaitRunning', [{ at: { cloud: 'fake', region: 'fake-b' } }]));
  done(cr, { instanceId: 'fake-3' });
  done(sched('probeSsh', [{}]));
  // fake-b won: the refill is cancelled and deleted before the launch returns.
  if (!o.keepLoser) done(release(refill, ['fake-3']));
  f.push({ e: 'stage', stage: 'ready' });
  f.push({ e: 'signal', name: 'teardown' });
  f.push({ e: 'stage', stage: 'tearing-down' });
  done(release(y, ['fake-2']));
  f.push({ e: 'stage', stage: 'terminated' });
  const rec = (index: number, of: Of, outcome: string, kind?: string) => ({
    index,
    offer: of,
    outcome,
    ...(kind ? { kind, phase: 'create' } : {}),
    instanceIds: [],
    compensated: outcome !== 'ready',
  });
  const attempts = [rec(0, x, 'failed', 'Capacity'), rec(1, y, 'ready'), rec(2, refill, 'cancelled', 'Cancelled')];
  f.push({ e: 'closed', status: 'completed', result: { stage: 'terminated', instanceIds: [], attempts } });
  return f;
}

const trace: Trace = {
  seed: 1,
  level: 'fake',
  bootMs: 0,
  faults: [{ primitive: 'create', error: 'Capacity', times: 1, region: 'fake-a', instanceType: 'gpu-1' }],
  vms: [{ vm: 0, startAfterMs: 0, op: { op: 'teardown-when-ready' }, duplicateStart: false, restart: false, parallel: 2 }],
  kills: [],
};
const run = (facts: Fact[]): RunFacts => ({ workflowId: `vm-${VM}`, runId: 'run-00000001', vmName: VM, facts });
const live = (id: string, region: string) => ({ id, vmName: VM, region, instanceType: 'gpu-1', port: 20002 });

function clean(o: Opts = {}): Evidence {
  return {
    trace,
    mutateMaxAttempts: 3,
    runs: [run(build(o))],
    samples: [
      { t: 100, vm: VM, runId: 'run-00000001', stage: 'creating', instanceIds: [], quiet: true, live: [live('fake-2', 'fake-b'), live('fake-3', 'fake-a')] },
      {
        t: 900,
        vm: VM,
        runId: 'run-00000001',
        stage: 'ready',
        instanceIds: ['fake-2'],
        region: 'fake-b',
        endpointPort: 20002,
        quiet: true,
        live: [live('fake-2', 'fake-b')],
      },
    ],
    everSeen: { [VM]: ['fake-1', 'fake-2', 'fake-3'] },
    finalLive: [],
    finalSideResources: [],
    unconverged: [],
    closedWhileHolding: [],
    duplicateStartsAccepted: [],
    vanished: [],
    disruptions: 0,
    replayErrors: {},
    secrets: { 'run-00000001': [] },
  };
}

const ids = (e: Evidence): string[] => judge(e).map((v) => v.invariant);

describe('chaos oracle on hedged launches (--parallel 2)', () => {
  it('passes a clean race: attempts interleave across lanes, the loser is deleted before Ready', () => {
    expect(judge(clean())).toEqual([]);
  });

  it('reads the same history as a violation when the VM was serial (the window of an attempt is no longer its lane)', () => {
    const e = clean();
    e.trace = { ...trace, vms: trace.vms.map(({ parallel: _p, ...v }) => v) };
    expect(ids(e)).toEqual(expect.arrayContaining(['plan-order', 'at-most-n-live-per-name']));
  });

  it('no-loser-left: a loser not deleted before the launch returned is caught (history and cloud)', () => {
    expect(ids(clean({ keepLoser: true }))).toEqual(expect.arrayContaining(['no-loser-left', 'abandoned-attempts-deleted']));
    const e = clean();
    e.samples[1]!.live.push(live('fake-3', 'fake-a'));
    expect(ids(e)).toContain('no-loser-left');
  });

  it("leak-visible, hedged: the loser's failed release upserts leaked, then the winner's lane shows its own stage", () => {
    const e = clean();
    const facts = e.runs[0]!.facts;
    // The refill's release (fake-a) fails once, the VM shows leaked, the winner's lane then says connecting; the retry succeeds.
    const i = facts.findIndex((f) => f.e === 'activity' && f.type === 'releaseAt' && (f.input[0] as { instanceIds: string[] }).instanceIds[0] === 'fake-3');
    const target = (facts[i] as { input: unknown[] }).input;
    facts.splice(
      i,
      0,
      { e: 'activity', id: 900, type: 'releaseAt', input: target },
      { e: 'activityFailed', id: 900, failureType: 'Transient' },
      { e: 'stage', stage: 'leaked' },
      { e: 'stage', stage: 'connecting' },
    );
    expect(judge(e)).toEqual([]);
    facts.splice(i + 2, 1);
    expect(ids(e)).toContain('leak-visible');
  });

  it('plan-order: going back within a lane is caught', () => {
    expect(ids(clean({ first: [A2, B1], refill: A1 }))).toContain('plan-order');
  });

  it('no-skip-without-block: starting a later offer while an earlier one in a free lane waits is caught', () => {
    expect(ids(clean({ first: [A1, B2] }))).toContain('no-skip-without-block');
  });
});

describe('chaos oracle on the watcher and two deployments', () => {
  it('a vanished VM lost within a fast cycle passes; an orphan swept in time passes; each deployment touching its own passes', () => {
    const e = clean();
    e.watcher = { fastIntervalMs: 500, orphanGraceMs: 3_000 };
    e.vanished = [VM];
    e.vanishedAt = { [VM]: 1_000 };
    const facts = e.runs[0]!.facts;
    facts.splice(facts.length - 1, 0, { e: 'stage', stage: 'lost', atMs: 2_200 });
    (facts.at(-1) as { result: { stage: string } }).result.stage = 'lost';
    e.orphans = { atClose: [live('fake-9', 'fake-a')], left: [], waitedMs: 3_400 };
    e.calls = [
      { primitive: 'delete', vmName: VM, region: 'fake-a', deployment: 'staging', owners: ['staging'] },
      { primitive: 'inventory', region: 'fake-a', deployment: 'prod', owners: ['prod'] },
    ];
    expect(ids(e).filter((i) => ['lost-within-cycle', 'orphans-swept-within-grace', 'deployments-isolated'].includes(i))).toEqual([]);
    e.calls.push({ primitive: 'inventory', region: 'fake-a', deployment: 'prod', owners: ['prod', 'staging'] });
    expect(ids(e)).toContain('deployments-isolated');
    e.calls = [{ primitive: 'delete', vmName: VM, region: 'fake-a', owners: ['prod'] }];
    expect(ids(e)).toContain('deployments-isolated');
  });
});
