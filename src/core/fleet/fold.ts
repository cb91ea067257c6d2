/**
 * `fold`: one observation into the fleet state, by one reducer per event kind. A reducer
 * returns the slot's new record, or undefined to discard the event (state unchanged): an event
 * that does not fit the record (e.g. a `vmReady` for a VM not launching, a `bootDone` with no
 * start pending) is stale. Events of a missing slot or another attempt never reach a reducer.
 *
 * | `vmReady` on a slot whose VM is                | the record                                               |
 * |------------------------------------------------|----------------------------------------------------------|
 * | `launching`                                    | `up`, its endpoint; ready unless a bootstrap is due      |
 * | `up`, at the same endpoint                     | stale (told twice)                                       |
 * | `up`, at another endpoint                      | the child replaced its preempted instance (src/core/recovery.ts, row `replace`): the new endpoint; a bootstrap slot bootstraps again |
 * | anything else                                  | stale                                                    |
 */
import { backoffMs, type FleetTuning } from './backoff';
import { clearPending, failed, withSlot, type BootFacts, type FleetEvent, type FleetState, type SlotRecord } from './slot';

type EventOf<K extends FleetEvent['type']> = Extract<FleetEvent, { type: K }>;
type Reducer<K extends FleetEvent['type']> = (r: SlotRecord, e: EventOf<K>, now: number, t: FleetTuning) => SlotRecord | undefined;

function seqs(e: { lastStdoutSeq?: number; lastStderrSeq?: number }): Partial<BootFacts> {
  return {
    ...(e.lastStdoutSeq !== undefined ? { lastStdoutSeq: e.lastStdoutSeq } : {}),
    ...(e.lastStderrSeq !== undefined ? { lastStderrSeq: e.lastStderrSeq } : {}),
  };
}

const vmStarted: Reducer<'vmStarted'> = (r) => ({ ...clearPending(r, ['startVm']), resultAwaited: true });

const sameEndpoint = (a: SlotRecord['endpoint'], b: SlotRecord['endpoint']): boolean => a?.host === b?.host && a?.port === b?.port && a?.user === b?.user;

/** The same attempt, Ready again on a replacement instance (its old one was preempted). */
function replaced(rec: SlotRecord, e: EventOf<'vmReady'>): SlotRecord {
  const { hostKey: _h, workerKeyFingerprint: _w, ...rest } = rec;
  const r: SlotRecord = {
    ...rest,
    endpoint: e.endpoint,
    ...(e.hostKey ? { hostKey: e.hostKey } : {}),
    ...(e.workerKeyFingerprint ? { workerKeyFingerprint: e.workerKeyFingerprint } : {}),
  };
  if (!r.template.bootstrap) return r;
  // The old VM's bootstrap is gone with it; clearing its op makes that op's late answer stale.
  const fresh = clearPending(r, ['startBootstrap', 'stopBootstrap']);
  return { ...fresh, boot: { state: 'none', started: false }, ready: false, ...(r.intent === 'active' ? { stage: 'launching' as const } : {}) };
}

const vmReady: Reducer<'vmReady'> = (rec, e) => {
  if (rec.vm === 'up') return sameEndpoint(rec.endpoint, e.endpoint) ? undefined : replaced(rec, e);
  if (rec.vm !== 'launching') return undefined;
  const r: SlotRecord = {
    ...clearPending(rec, ['startVm']),
    vm: 'up',
    endpoint: e.endpoint,
    ...(e.hostKey ? { hostKey: e.hostKey } : {}),
    ...(e.workerKeyFingerprint ? { workerKeyFingerprint: e.workerKeyFingerprint } : {}),
  };
  return r.intent === 'active' && !r.template.bootstrap ? { ...r, ready: true, stage: 'ready', failures: 0, cleanupTries: 0 } : r;
};

const vmK8sFailed: Reducer<'vmK8sFailed'> = (rec, e) => {
  if (rec.vm !== 'launching' && rec.vm !== 'up') return undefined;
  const r: SlotRecord = {
    ...clearPending(rec, ['startVm']),
    vm: 'up',
    ready: false,
    k8sFailed: e.reason,
    failedReason: e.reason,
    ...(e.endpoint ? { endpoint: e.endpoint } : {}),
    ...(e.hostKey ? { hostKey: e.hostKey } : {}),
    ...(e.workerKeyFingerprint ? { workerKeyFingerprint: e.workerKeyFingerprint } : {}),
  };
  return r.intent === 'active' && r.stage !== 'failed' ? { ...r, stage: 'k8s-failed' } : r;
};

const teardownSent: Reducer<'teardownSent'> = (r, _e, now, t) => {
  // Delivered to a child that already reported its end: it is still closing. Probe again later.
  if (r.pending?.op !== 'teardownVm' || r.vm !== 'ended') return undefined;
  const tries = r.cleanupTries + 1;
  return { ...clearPending(r, ['teardownVm']), cleanupTries: tries, retryAt: now + backoffMs(t, tries, r.slot, r.attempt) };
};

const vmEnded: Reducer<'vmEnded'> = (rec, e) => {
  if (rec.vm === 'gone' || rec.vm === 'none' || (rec.vm === 'ended' && !e.closed)) return undefined;
  const budget = e.budgetReached && rec.intent === 'active' ? { budgetSpent: true } : {};
  let r = clearPending({ ...rec, vm: e.closed ? 'gone' : 'ended', ready: false, ...budget }, ['startVm', 'teardownVm']);
  r = failed(r, `VM ${e.outcome}${e.reason ? `: ${e.reason}` : ''}`);
  return r.intent === 'deleting' && r.stage !== 'failed' ? { ...r, stage: 'deleting' } : r;
};

const bootObserved: Reducer<'bootObserved'> = (r, e, now) => {
  if (r.boot.state !== 'running') return undefined;
  return { ...r, boot: { ...r.boot, stage: e.stage, observedAt: now, ...seqs(e), ...(e.startedAt !== undefined ? { startedAt: e.startedAt } : {}) } };
};

const bootDone: Reducer<'bootDone'> = (rec, e, now) => {
  if (rec.pending?.op !== 'startBootstrap') return undefined;
  const r = clearPending(rec, ['startBootstrap']);
  if (e.ok && r.intent === 'active') {
    return {
      ...r,
      ready: true,
      stage: 'ready',
      failures: 0,
      cleanupTries: 0,
      boot: { ...r.boot, state: 'ready', stage: e.stage, readyAt: now, observedAt: now, ...seqs(e) },
    };
  }
  const observed: SlotRecord = { ...r, boot: { ...r.boot, state: e.ok ? 'ready' : 'failed', stage: e.stage, observedAt: now, ...seqs(e) } };
  return e.ok ? observed : failed(observed, `bootstrap ${e.stage}${e.reason ? `: ${e.reason}` : ''}`);
};

const bootStopped: Reducer<'bootStopped'> = (r, _e, now) => {
  if (r.pending?.op !== 'stopBootstrap') return undefined;
  return { ...clearPending(r, ['stopBootstrap']), cleanupTries: 0, boot: { ...r.boot, state: 'stopped', started: false, observedAt: now } };
};

const opFailed: Reducer<'opFailed'> = (rec, e, now, t) => {
  if (rec.pending?.op !== e.op) return undefined;
  let r = clearPending(rec, [e.op]);
  if (e.op === 'startVm' || e.op === 'startBootstrap') {
    // The effect may have happened anyway: vm stays `launching` / boot `started`, so cleanup covers it.
    if (e.op === 'startBootstrap') r = { ...r, boot: { ...r.boot, state: 'failed', stage: 'start-failed', observedAt: now } };
    return failed(r, `${e.op}: ${e.reason}`);
  }
  const tries = r.cleanupTries + 1;
  return { ...r, cleanupTries: tries, retryAt: now + backoffMs(t, tries, r.slot, r.attempt), failedReason: `${e.op}: ${e.reason}` };
};

const REDUCERS: { readonly [K in FleetEvent['type']]: Reducer<K> } = {
  vmStarted,
  vmReady,
  vmK8sFailed,
  vmEnded,
  teardownSent,
  bootObserved,
  bootDone,
  bootStopped,
  opFailed,
};

/** Fold one observation. Events of a missing slot or another attempt are discarded unchanged. */
export function fold(s: FleetState, e: FleetEvent, now: number, t: FleetTuning): FleetState {
  const rec = s.slots[e.slot];
  if (!rec || rec.attempt !== e.attempt) return s;
  const reduce = REDUCERS[e.type] as Reducer<FleetEvent['type']>;
  const r = reduce(rec, e, now, t);
  return r ? withSlot(s, r, e.slot) : s;
}
