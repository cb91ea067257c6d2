import { describe, expect, it } from 'vitest';
import type { InstanceStatus, Owned } from '../../../src/core/provider';
import {
  cadenceOf,
  DEFAULT_WATCHER_TUNING,
  heartbeatEveryMs,
  planCycle as planDigest,
  intervalOf,
  watcherWorkflowId,
  withWatcherTuning,
  type CycleView,
  type OrphanSeen,
  type OwnerVm,
  type SweepEvidence,
} from '../../../src/core/watcher';
import type { WatcherTuning } from '../../../src/core/watcher-api';
import { cycleMustReturn, digestOf, dueIn, viewSignature } from '../../../src/core/watcher-digest';

const t = withWatcherTuning({ fastIntervalMs: 5_000, readyIntervalMs: 20_000, slowIntervalMs: 300_000, orphanGraceMs: 600_000 });
const inst = (id: string, vmName: string, status: InstanceStatus = 'Running'): Owned => ({ id, vmName, status, location: { cloud: 'c', region: 'r' } });
const owner = (vmName: string, stage: OwnerVm['stage'] = 'ready'): OwnerVm => ({ workflowId: `vm-${vmName}`, vmName, stage });
/** Every VM name these cases use is on record, unless a case says otherwise. */
const REC = { recorded: new Set(['a', 'b', 'c', 'z']) };
/** The watcher's two halves as one: the activity's digest of the view, then the workflow's decisions on it. */
const planCycle = (view: CycleView, known: readonly OrphanSeen[], nowMs: number, tuning: WatcherTuning, evidence: SweepEvidence) =>
  planDigest(digestOf(view), known, nowMs, tuning, evidence);

describe('planCycle', () => {
  it('an owned, running instance of a Ready VM: nothing to do (no row), the ready cadence', () => {
    const p = planCycle({ instances: [inst('i1', 'a')], owners: [owner('a')] }, [], 1_000, t, REC);
    expect(p.rows).toEqual([]);
    expect(p.lost).toEqual([]);
    expect(p.orphans).toEqual([]);
    expect(p.cadence).toBe('ready');
    expect(p.fast).toBe(true);
    expect(p.nextCycleInMs).toBe(20_000);
  });

  it('cadence: fast while a VM placed here launches or tears down, ready while all are Ready, slow when none', () => {
    expect(cadenceOf([owner('a'), owner('b', 'booting')])).toBe('fast');
    expect(cadenceOf([owner('a', 'tearing-down')])).toBe('fast');
    expect(cadenceOf([owner('a'), owner('b', 'k8s-failed'), owner('c', 'leaked'), owner('d', 'waiting-retry')])).toBe('ready');
    // a VM launching in another region owns an instance here, but does not speed this watcher up
    expect(cadenceOf([{ ...owner('a', 'creating'), elsewhere: true }])).toBe('ready');
    expect(cadenceOf([])).toBe('slow');
    expect(planCycle({ instances: [], owners: [owner('a', 'creating')] }, [], 0, t, REC).nextCycleInMs).toBe(5_000);
  });

  it('cadence: spot while a VM placed here is Ready on spot (its create recorded as spot), looking every 4 s (never slower than ready)', () => {
    const spot = new Set(['a']);
    expect(cadenceOf([owner('a'), owner('b')], spot)).toBe('spot');
    expect(cadenceOf([owner('b'), owner('a', 'booting')], spot)).toBe('fast');
    expect(cadenceOf([owner('b')], spot)).toBe('ready');
    expect(cadenceOf([{ ...owner('a'), elsewhere: true }], spot)).toBe('ready');
    expect(intervalOf('spot', t)).toBe(4_000);
    expect(intervalOf('spot', withWatcherTuning({ readyIntervalMs: 300 }))).toBe(300);
  });

  it('heartbeats every half the heartbeat timeout; the defaults meet P7 (ready look ≤ 30 s, a few beats per window)', () => {
    expect(heartbeatEveryMs(withWatcherTuning({ heartbeatTimeoutMs: 180_000 }))).toBe(90_000);
    const d = DEFAULT_WATCHER_TUNING;
    expect(d.fastIntervalMs).toBeLessThan(d.readyIntervalMs);
    expect(d.readyIntervalMs).toBeLessThan(d.slowIntervalMs);
    expect(d.readyIntervalMs).toBeLessThanOrEqual(20_000);
  });

  it('a Ready VM whose instance vanished or failed is lost; a launching one is left to its workflow', () => {
    const p = planCycle({ instances: [inst('i2', 'b', 'Failed')], owners: [owner('a'), owner('b', 'k8s-failed'), owner('c', 'booting')] }, [], 0, t, REC);
    expect(p.lost.map((l) => l.vmName).sort()).toEqual(['a', 'b']);
    expect(p.lost.find((l) => l.vmName === 'a')!.cause).toEqual({ kind: 'vanished' });
    expect(p.lost.find((l) => l.vmName === 'b')).toMatchObject({
      instanceIds: ['i2'],
      cause: { kind: 'failed', detail: expect.stringContaining('i2 is Failed') },
    });
    expect(digestOf({ instances: [inst('i2', 'b', 'Failed')], owners: [owner('a'), owner('b', 'k8s-failed'), owner('c', 'booting')] }).settling).toBe(1);
    // a Failed instance with an owner is not an orphan
    expect(p.orphans).toEqual([]);
  });

  it('an instance whose VM is open elsewhere (another region, cloud or queue) is owned, and that VM is never lost from here', () => {
    const away = { ...owner('a'), elsewhere: true };
    const p = planCycle({ instances: [inst('i1', 'a', 'Failed')], owners: [away] }, [], 0, t, REC);
    expect(p.rows).toEqual([]);
    expect(p.orphans).toEqual([]);
    expect(p.lost).toEqual([]);
    expect(planCycle({ instances: [], owners: [away] }, [], 0, t, REC).lost).toEqual([]);
  });

  it('a Pending instance of a Ready VM is not lost', () => {
    expect(planCycle({ instances: [inst('i1', 'a', 'Pending')], owners: [owner('a')] }, [], 0, t, REC).lost).toEqual([]);
  });

  it('an unowned instance is an orphan: remembered, deleted only after the grace', () => {
    const first = planCycle({ instances: [inst('i9', 'z'), inst('i8', 'z')], owners: [] }, [], 1_000, t, REC);
    expect(first.orphans).toEqual([{ vmName: 'z', instanceIds: ['i8', 'i9'], firstSeenAtMs: 1_000 }]);
    expect(first.due).toEqual([]);
    expect(first.fast).toBe(false);
    // slow cadence, but not later than the grace's end
    expect(first.nextCycleInMs).toBe(300_000);
    const later = planCycle({ instances: [inst('i9', 'z'), inst('i8', 'z')], owners: [] }, first.orphans, 1_000 + 400_000, t, REC);
    expect(later.orphans[0]!.firstSeenAtMs).toBe(1_000);
    expect(later.due).toEqual([]);
    expect(later.nextCycleInMs).toBe(200_000);
    const due = planCycle({ instances: [inst('i9', 'z')], owners: [] }, later.orphans, 1_000 + 600_000, t, REC);
    expect(due.due).toEqual([{ vmName: 'z', instanceIds: ['i9'], firstSeenAtMs: 1_000 }]);
    expect(due.nextCycleInMs).toBe(5_000);
  });

  it('an orphan that gains an owner (visibility lag) or vanishes is forgotten', () => {
    const known = [{ vmName: 'z', instanceIds: ['i9'], firstSeenAtMs: 0 }];
    expect(planCycle({ instances: [inst('i9', 'z')], owners: [owner('z', 'creating')] }, known, 10, t, REC).orphans).toEqual([]);
    expect(planCycle({ instances: [], owners: [] }, known, 10, t, REC).orphans).toEqual([]);
  });

  it('side resources with no instance and no open workflow are an orphan too; owned ones are not', () => {
    const sides = [
      { vmName: 'z', kind: 'security-group', id: 'sg-2' },
      { vmName: 'z', kind: 'key-pair', id: 'k-1' },
      { vmName: 'a', kind: 'security-group', id: 'sg-1' },
    ];
    const p = planCycle({ instances: [], owners: [owner('a', 'preparing')], sides }, [], 1_000, t, REC);
    expect(p.orphans).toEqual([{ vmName: 'z', instanceIds: [], sideResources: ['key-pair:k-1', 'security-group:sg-2'], firstSeenAtMs: 1_000 }]);
    expect(p.lost).toEqual([]);
    const due = planCycle({ instances: [], owners: [], sides }, p.orphans, 1_000 + 600_000, t, REC);
    // its grace is over; `a`, unowned only from now on, waits out its own
    expect(due.due.map((o) => o.vmName)).toEqual(['z']);
    expect(due.orphans.find((o) => o.vmName === 'a')).toMatchObject({ instanceIds: [], firstSeenAtMs: 601_000 });
    // an instance and side resources of one unowned name: one orphan carrying both
    const both = planCycle({ instances: [inst('i9', 'z')], owners: [], sides }, [], 0, t, REC);
    expect(both.orphans.find((o) => o.vmName === 'z')).toMatchObject({ instanceIds: ['i9'], sideResources: ['key-pair:k-1', 'security-group:sg-2'] });
    // a side resource appearing or going is a change for the long-polling cycle
    expect(viewSignature({ instances: [], owners: [], sides })).not.toBe(viewSignature({ instances: [], owners: [] }));
    expect(viewSignature({ instances: [], owners: [], sides: [] })).toBe(viewSignature({ instances: [], owners: [] }));
  });

  it('sweepNow makes every orphan due at once', () => {
    const p = planCycle({ instances: [inst('i9', 'z')], owners: [] }, [], 0, t, { ...REC, sweepNow: true });
    expect(p.due).toEqual([{ vmName: 'z', instanceIds: ['i9'], firstSeenAtMs: 0 }]);
  });

  it('the next cycle never waits less than the fast interval for an orphan almost due', () => {
    const p = planCycle({ instances: [inst('i9', 'z')], owners: [] }, [{ vmName: 'z', instanceIds: ['i9'], firstSeenAtMs: 0 }], 599_999, t, REC);
    expect(p.due).toEqual([]);
    expect(p.nextCycleInMs).toBe(5_000);
  });
});

describe('planCycle: positive evidence only', () => {
  it('a tagged instance nobody recorded is unknown: shown, never due, even past the grace or when a sweep is asked', () => {
    const view = { instances: [inst('i7', 'stranger')], owners: [] };
    const first = planCycle(view, [], 0, t, REC);
    expect(first.orphans).toEqual([]);
    expect(first.unknown).toEqual([{ vmName: 'stranger', instanceIds: ['i7'], firstSeenAtMs: 0 }]);
    expect(first.rows).toEqual([{ row: 'unknown', vmName: 'stranger', instanceIds: ['i7'], firstSeenAtMs: 0 }]);
    const later = planCycle(view, first.unknown, 10 * 600_000, t, { ...REC, sweepNow: true });
    expect(later.due).toEqual([]);
    expect(later.unknown[0]!.firstSeenAtMs).toBe(0);
    // an unknown instance does not make the watcher look faster
    expect(later.nextCycleInMs).toBe(300_000);
  });

  it('an unknown VM name the operator names is due at once, as an orphan; the others stay unknown', () => {
    const view = { instances: [inst('i7', 'stranger'), inst('i8', 'other')], owners: [] };
    const p = planCycle(view, [], 0, t, { ...REC, sweepNow: true, includeUnknown: ['stranger'] });
    expect(p.due.map((o) => o.vmName)).toEqual(['stranger']);
    expect(p.unknown.map((o) => o.vmName)).toEqual(['other']);
  });

  it('an unknown name with an open owner is owned, not unknown', () => {
    const p = planCycle({ instances: [inst('i7', 'stranger')], owners: [owner('stranger')] }, [], 0, t, REC);
    expect(p.unknown).toEqual([]);
    expect(p.rows).toEqual([]);
  });

  it("a recorded name: an instance with another create key (a same-id install) is unknown, this deployment's own is an orphan", () => {
    const keyed = (id: string, createKey: string): Owned => ({ ...inst(id, 'a'), createKey });
    const view = { instances: [keyed('i1', 'mine'), keyed('i2', 'theirs')], owners: [] };
    const p = planCycle(view, [], 600_000, t, { ...REC, createKeys: new Map([['a', new Set(['mine'])]]) });
    expect(p.unknown).toEqual([{ vmName: 'a', instanceIds: ['i2'], firstSeenAtMs: 600_000 }]);
    expect(p.orphans).toEqual([{ vmName: 'a', instanceIds: ['i1'], firstSeenAtMs: 600_000 }]);
    // Only the other install's instance left: nothing of the name is swept.
    const alone = planCycle({ instances: [keyed('i2', 'theirs')], owners: [] }, [], 0, t, {
      ...REC,
      sweepNow: true,
      createKeys: new Map([['a', new Set(['mine'])]]),
    });
    expect(alone.due).toEqual([]);
    expect(alone.rows.map((r) => r.row)).toEqual(['unknown']);
    // No keys on record for the name (older ledgers): as before, an orphan.
    expect(planCycle({ instances: [keyed('i2', 'theirs')], owners: [] }, [], 0, t, { ...REC, sweepNow: true }).due.map((o) => o.vmName)).toEqual(['a']);
  });
});

describe('watcherWorkflowId', () => {
  it('is one per deployment, cloud and region', () => {
    expect(watcherWorkflowId('prod', 'aws', 'us-east-1')).toBe('gpuprov-watch:prod:aws:us-east-1');
  });
});

describe('long-polling cycle', () => {
  it('returns when the view changes or an orphan is due, not for a loss already reported', () => {
    const must = (view: CycleView, known: OrphanSeen[], nowMs: number, last: string): boolean =>
      cycleMustReturn(dueIn(digestOf(view), known, nowMs, t.orphanGraceMs).length, viewSignature(view), last);
    const view = { instances: [inst('i1', 'a')], owners: [owner('a')] };
    const sig = viewSignature(view);
    expect(viewSignature({ instances: [...view.instances].reverse(), owners: [...view.owners] })).toBe(sig);
    expect(must(view, [], 0, sig)).toBe(false);
    const failed = { instances: [inst('i1', 'a', 'Failed')], owners: [owner('a')] };
    expect(must(failed, [], 0, sig)).toBe(true);
    // the same lost view again: the VM was told when it changed
    expect(must(failed, [], 0, viewSignature(failed))).toBe(false);
    const orphan = { instances: [inst('i9', 'z')], owners: [] };
    const known = [{ vmName: 'z', instanceIds: ['i9'], firstSeenAtMs: 0 }];
    expect(must(orphan, known, 1_000, viewSignature(orphan))).toBe(false);
    expect(must(orphan, known, 600_000, viewSignature(orphan))).toBe(true);
  });
});

describe('digestOf: what passes through the watcher history', () => {
  it('holds no owned instance and no owner, only counts: its size does not grow with a healthy fleet', () => {
    const fleet = (n: number): CycleView => ({
      instances: Array.from({ length: n }, (_, i) => inst(`i-${i}`, `vm-${i}`)),
      owners: Array.from({ length: n }, (_, i) => owner(`vm-${i}`)),
    });
    const small = JSON.stringify(digestOf(fleet(10)));
    const large = JSON.stringify(digestOf(fleet(5_000)));
    expect(JSON.parse(large)).toMatchObject({ instances: 5_000, owners: 5_000, unowned: [], lost: [], settling: 0, present: [] });
    expect(large.length - small.length).toBeLessThanOrEqual(6);
  });

  it('answers only the ledger names asked about: present when listed, unowned or owned', () => {
    const view = { instances: [inst('i1', 'a'), inst('i9', 'z')], owners: [owner('a'), owner('b', 'creating')] };
    const d = digestOf(view, ['a', 'b', 'z', 'gone']);
    expect(d.present).toEqual(['a', 'b', 'z']);
    expect(d.unowned).toEqual([{ vmName: 'z', instances: [{ id: 'i9' }] }]);
    expect(d.settling).toBe(1);
  });
});
