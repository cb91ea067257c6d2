/**
 * The oracle can fail: a clean piece of evidence (a failover with compensation, then teardown)
 * passes every invariant, and for every invariant one targeted corruption of it is caught. An
 * attempt is one prepareAndCreate, its release one releaseAt.
 */
import { describe, expect, it } from 'vitest';
import type { Fact, RunFacts } from '../../chaos/history';
import { INVARIANTS, judge, type Evidence } from '../../chaos/oracle';
import type { Trace } from '../../chaos/trace';

const offer = (region: string, instanceType: string) => ({ cloud: 'fake', region, instanceType });
const A1 = offer('fake-a', 'gpu-1');
const A2 = offer('fake-a', 'gpu-2');
const B1 = offer('fake-b', 'gpu-1');
const B2 = offer('fake-b', 'gpu-2');
const atA = { cloud: 'fake', region: 'fake-a' };
const VM = 'c1-0';

function build(
  o: {
    plan?: object[];
    first?: object;
    firstKind?: string;
    prepareStep?: boolean;
    /** The first attempt's refused create was released by the activity itself. */
    released?: boolean;
    second?: object;
    compensate?: boolean;
    cancelBeforeSecond?: boolean;
    cleanupFirst?: boolean;
    teardownFails?: boolean;
  } = {},
): Fact[] {
  let id = 0;
  const f: Fact[] = [];
  /** `outcome`: 'ok', or the failure type the activity failed with. */
  const act = (type: string, input: unknown[], outcome = 'ok', result: unknown = null): void => {
    const a = ++id;
    f.push({ e: 'activity', id: a, type, input });
    f.push(
      outcome === 'ok'
        ? { e: 'activityDone', id: a, result }
        : {
            e: 'activityFailed',
            id: a,
            failureType: outcome,
            ...(o.prepareStep && type === 'prepareAndCreate' ? { prepareStep: true } : {}),
            ...(o.released && type === 'prepareAndCreate' ? { released: true } : {}),
          },
    );
  };
  const stage = (s: string): void => void f.push({ e: 'stage', stage: s });
  const first = o.first ?? A1;
  const second = o.second ?? A2;
  const attempt = (of: object, outcome: string, result: unknown = null): void => {
    stage('creating');
    act('prepareAndCreate', [of, {}], outcome, result);
  };
  const target = (ids: string[], mode: 'full' | 'cleanup') => ({ at: atA, vmName: VM, instanceIds: ids, mode, pollIntervalMs: 200, deadlineAtMs: 0 });
  const release = (ids: string[], outcome = 'ok'): void => act('releaseAt', [target(ids, 'full')], outcome);
  const cleanupOnly = (): void => act('releaseAt', [target([], 'cleanup')]);
  stage('planning');
  act('planOffers', [{}], 'ok', { offers: o.plan ?? [A1, A2, B1, B2] });
  attempt(first, o.firstKind ?? 'Capacity');
  stage('compensating');
  if (o.compensate ?? true) {
    if (o.cleanupFirst) cleanupOnly();
    release([]);
  } else cleanupOnly();
  if (o.cancelBeforeSecond) f.push({ e: 'signal', name: 'cancel' });
  attempt(second, 'ok', { instanceId: 'fake-2', adopted: false });
  stage('booting');
  act('awaitRunning', [{}]);
  stage('connecting');
  act('probeSsh', [{}]);
  stage('ready');
  f.push({ e: 'signal', name: 'teardown' });
  stage('tearing-down');
  if (o.teardownFails) {
    release(['fake-2'], 'Transient');
    stage('leaked');
  }
  release(['fake-2']);
  stage('terminated');
  const attempts = [
    {
      index: 0,
      offer: first,
      outcome: o.firstKind === 'Unavailable' ? 'unavailable' : 'failed',
      phase: 'create',
      kind: o.firstKind ?? 'Capacity',
      instanceIds: [],
      compensated: true,
    },
    { index: 1, offer: second, outcome: 'ready', instanceIds: ['fake-2'], compensated: false },
  ];
  f.push({ e: 'closed', status: 'completed', result: { stage: 'terminated', instanceIds: [], attempts } });
  return f;
}

const trace: Trace = {
  seed: 1,
  level: 'fake',
  bootMs: 0,
  faults: [{ primitive: 'create', error: 'Capacity', times: 1, ambiguous: true, region: 'fake-a', instanceType: 'gpu-1' }],
  vms: [{ vm: 0, startAfterMs: 0, op: { op: 'teardown-when-ready' }, duplicateStart: false, restart: false }],
  kills: [],
};

const run = (facts: Fact[]): RunFacts => ({ workflowId: `vm-${VM}`, runId: 'run-00000001', vmName: VM, facts });
const live2 = { id: 'fake-2', vmName: VM, region: 'fake-a', instanceType: 'gpu-2', port: 20003 };

function clean(): Evidence {
  return {
    trace,
    mutateMaxAttempts: 3,
    runs: [run(build())],
    samples: [
      { t: 100, vm: VM, runId: 'run-00000001', stage: 'creating', instanceIds: [], region: 'fake-a', quiet: true, live: [] },
      {
        t: 900,
        vm: VM,
        runId: 'run-00000001',
        stage: 'ready',
        instanceIds: ['fake-2'],
        region: 'fake-a',
        endpointPort: 20003,
        quiet: true,
        live: [live2],
        describedStage: 'ready',
      },
      { t: 1200, vm: VM, runId: 'run-00000001', stage: 'ready', instanceIds: ['fake-2'], region: 'fake-a', endpointPort: 20003, quiet: true, live: [live2] },
    ],
    calls: [
      { primitive: 'plan' },
      { primitive: 'prepare', vmName: VM, region: 'fake-a', instanceType: 'gpu-1' },
      { primitive: 'create', vmName: VM, region: 'fake-a', instanceType: 'gpu-1' },
      { primitive: 'delete', vmName: VM, region: 'fake-a' },
      { primitive: 'cleanup', vmName: VM, region: 'fake-a' },
      { primitive: 'create', vmName: VM, region: 'fake-a', instanceType: 'gpu-2' },
      { primitive: 'delete', vmName: VM, region: 'fake-a' },
      { primitive: 'cleanup', vmName: VM, region: 'fake-a' },
    ],
    everSeen: { [VM]: ['fake-1', 'fake-2'] },
    finalLive: [],
    finalSideResources: [],
    unconverged: [],
    closedWhileHolding: [],
    duplicateStartsAccepted: [],
    vanished: [],
    disruptions: 0,
    watcher: { fastIntervalMs: 500, orphanGraceMs: 3_000 },
    orphans: { atClose: [], left: [], waitedMs: 0 },
    replayErrors: {},
    secrets: { 'run-00000001': [] },
  };
}

const corruptions: [string, (e: Evidence) => void][] = [
  ['no-leak-after-convergence', (e) => e.finalLive.push(live2)],
  ['at-most-n-live-per-name', (e) => e.samples.push({ t: 500, vm: VM, quiet: false, live: [live2, { ...live2, id: 'fake-1' }] })],
  ['one-create-per-attempt', (e) => e.calls!.push({ primitive: 'create', vmName: VM, region: 'fake-a', instanceType: 'gpu-2' })],
  ['one-create-per-attempt', (e) => e.everSeen[VM]!.push('fake-3')],
  ['abandoned-attempts-deleted', (e) => (e.runs = [run(build({ compensate: false }))])],
  [
    'no-create-after-quota',
    (e) => ((e.runs = [run(build({ firstKind: 'Quota' }))]), (e.trace = { ...trace, faults: [{ primitive: 'create', error: 'Quota', times: 1 }] })),
  ],
  ['blocked-offer-not-retried', (e) => (e.runs = [run(build({ second: A1 }))])],
  ['plan-order', (e) => (e.runs = [run(build({ plan: [A2, A1, B1, B2] }))])],
  ['no-skip-without-block', (e) => (e.runs = [run(build({ plan: [A1, B1, A2, B2] }))])],
  ['no-create-after-cancel', (e) => (e.runs = [run(build({ cancelBeforeSecond: true }))])],
  [
    'unavailable-never-compensates',
    (e) => ((e.runs = [run(build({ firstKind: 'Unavailable' }))]), (e.trace = { ...trace, faults: [{ primitive: 'create', error: 'Unavailable', times: 1 }] })),
  ],
  ['cleanup-after-gone', (e) => (e.runs = [run(build({ cleanupFirst: true }))])],
  ['cleanup-after-gone', (e) => e.calls!.splice(3, 1)],
  ['status-agrees-with-cloud', (e) => (e.samples[1]!.live = [])],
  ['status-agrees-with-cloud', (e) => (e.samples[1]!.live = [{ ...live2, port: 1 }])],
  ['stage-attribute-agrees', (e) => (e.samples[1]!.describedStage = 'booting')],
  ['stage-attribute-agrees', (e) => e.runs[0]!.facts.splice(e.runs[0]!.facts.length - 2, 1)],
  ['leak-visible', (e) => (e.runs = [run(build({ teardownFails: true }).filter((f) => !(f.e === 'stage' && f.stage === 'leaked')))])],
  ['leak-resolves', (e) => e.runs[0]!.facts.splice(e.runs[0]!.facts.length - 2, 1, { e: 'stage', stage: 'leaked' })],
  ['histories-replay', (e) => (e.replayErrors['run-00000001'] = 'DeterminismViolationError')],
  ['no-secret-in-history', (e) => (e.secrets['run-00000001'] = ['PEM private key'])],
  ['converges', (e) => e.unconverged.push('c1-0: not ready or ended')],
  ['converges', (e) => e.runs[0]!.facts.pop()],
  ['terminal-holds-nothing', (e) => e.closedWhileHolding.push('c1-0 ended COMPLETED holding fake-2')],
  ['failure-justified', (e) => (e.trace = { ...trace, faults: [] })],
  ['action-outcome', (e) => (e.runs[0]!.facts = e.runs[0]!.facts.filter((f) => f.e !== 'signal'))],
  [
    'attempt-records-consistent',
    (e) => ((e.runs[0]!.facts.at(-1) as { result: { attempts: { compensated: boolean }[] } }).result.attempts[0]!.compensated = false),
  ],
  ['ready-instance-stable', (e) => (e.samples[2]!.instanceIds = ['fake-9'])],
  ['side-resources-cleaned', (e) => e.finalSideResources.push(`${VM}@fake-a`)],
  ['duplicate-start-rejected', (e) => e.duplicateStartsAccepted.push(VM)],
  ['orphans-swept-within-grace', (e) => (e.orphans = { atClose: [live2], left: [live2], waitedMs: 10_000 })],
  ['deployments-isolated', (e) => e.calls!.push({ primitive: 'delete', vmName: VM, region: 'fake-a', deployment: 'staging', owners: ['prod'] })],
  [
    'installs-isolated',
    (e) => e.calls!.push({ primitive: 'delete', vmName: VM, region: 'fake-a', deployment: 'install-a', removed: [{ id: 'fake-9', owner: 'install-b' }] }),
  ],
  ['lost-within-cycle', (e) => ((e.vanished = [VM]), (e.vanishedAt = { [VM]: 1_000 }))],
  [
    'lost-within-cycle',
    (e) => {
      e.vanished = [VM];
      e.vanishedAt = { [VM]: 1_000 };
      e.runs[0]!.facts.splice(e.runs[0]!.facts.length - 1, 0, { e: 'stage', stage: 'lost', atMs: 61_000 });
    },
  ],
  ['preempted-ready-or-lost', (e) => (e.preempted = { [VM]: { id: 'fake-2', t: 5_000, noticeAt: 5_000, reclaimAt: 5_000, noticeMs: 0, recover: true } })],
  ['billed-per-name', (e) => e.calls!.push({ primitive: 'create', vmName: VM, id: 'fake-8', at: 1 }, { primitive: 'create', vmName: VM, id: 'fake-9', at: 2 })],
  ['no-loser-left', (e) => ((e.trace = { ...trace, vms: trace.vms.map((s) => ({ ...s, parallel: 2 })) }), e.samples[1]!.live.push({ ...live2, id: 'fake-1' }))],
];

describe('chaos oracle', () => {
  it('has at least 20 invariants, each with a distinct id and a statement', () => {
    expect(INVARIANTS.length).toBeGreaterThanOrEqual(20);
    expect(new Set(INVARIANTS.map((i) => i.id)).size).toBe(INVARIANTS.length);
    for (const i of INVARIANTS) expect(i.says.length).toBeGreaterThan(20);
  });

  it('passes clean evidence (failover with compensation, then teardown)', () => {
    expect(judge(clean())).toEqual([]);
  });

  it.each(corruptions.map(([id, fn], i) => [`${id} #${i}`, id, fn] as const))('catches %s', (_label, id, corrupt) => {
    const e = clean();
    corrupt(e);
    expect(judge(e).map((v) => v.invariant)).toContain(id);
  });

  it('a second teardown pass failing while already leaked is still visible (no new upsert needed)', () => {
    const e = clean();
    const facts = build({ teardownFails: true });
    const leaked = facts.findIndex((f) => f.e === 'stage' && f.stage === 'leaked');
    const input = [{ at: atA, vmName: VM, instanceIds: ['fake-2'], mode: 'full' }];
    facts.splice(leaked + 1, 0, { e: 'activity', id: 900, type: 'releaseAt', input }, { e: 'activityFailed', id: 900, failureType: 'Transient' });
    e.runs = [run(facts)];
    expect(judge(e)).toEqual([]);
  });

  it('at-most-n-live-per-name: a VM started with --parallel 2 may hold two instances, never three', () => {
    const sample = (n: number) => ({ t: 500, vm: VM, quiet: false, live: Array.from({ length: n }, (_, i) => ({ ...live2, id: `fake-${i + 1}` })) });
    const e = clean();
    e.trace = { ...e.trace, vms: e.trace.vms.map((s) => ({ ...s, parallel: 2 })) };
    e.samples.push(sample(2));
    expect(judge(e).map((v) => v.invariant)).not.toContain('at-most-n-live-per-name');
    e.samples.push(sample(3));
    expect(judge(e).map((v) => v.invariant)).toContain('at-most-n-live-per-name');
  });

  it('every invariant has a corruption that trips it', () => {
    expect(new Set(corruptions.map(([id]) => id))).toEqual(new Set(INVARIANTS.map((i) => i.id)));
  });
});

describe('chaos oracle: a refused create the activity released', () => {
  it('needs no compensation by the workflow; without that mark the missing release is caught', () => {
    const e = clean();
    e.runs = [run(build({ released: true, compensate: false }))];
    expect(judge(e)).toEqual([]);
    e.runs = [run(build({ compensate: false }))];
    expect(judge(e).map((x) => x.invariant)).toEqual(expect.arrayContaining(['abandoned-attempts-deleted', 'cleanup-after-gone']));
  });
});

describe('chaos oracle: the prepare step', () => {
  it('a prepareAndCreate whose prepare step failed needs only a cleanup; without that mark, the cleanup-only release is caught', () => {
    const e = clean();
    e.runs = [run(build({ prepareStep: true, compensate: false }))];
    expect(judge(e)).toEqual([]);
    e.runs = [run(build({ compensate: false }))];
    expect(judge(e).map((x) => x.invariant)).toEqual(expect.arrayContaining(['abandoned-attempts-deleted', 'cleanup-after-gone']));
  });
});
