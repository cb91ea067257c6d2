/**
 * fleetWorkflow (ID `fleet-<name>`): the driver of a fleet. It holds the desired shape (changed
 * by the `applyShape` Update), folds observations (child results, `slotEvent` signals, bootstrap
 * activities) into the observed state, and runs the pure reconcile (`src/fleet/reconcile.ts`) on
 * every change and stored deadline. Each slot attempt is a child vmWorkflow with an
 * attempt-scoped ID; its bootstrap runs here as activities once the child reports `ready`.
 */
import {
  ApplicationFailure, CancellationScope, ParentClosePolicy, allHandlersFinished, condition, continueAsNew,
  getExternalWorkflowHandle, setCurrentDetails, setHandler, startChild, workflowInfo,
} from '@temporalio/workflow';
import type { BootstrapTarget } from '../activities/bootstrap';
import { withFleetTuning } from '../core/fleet/backoff';
import { isConverged, reconcile } from '../core/fleet/reconcile';
import { applyAction, attemptWorkflowId, emptyState, fold, isEffect, type Action, type FleetEvent, type FleetState, type SlotRecord } from '../core/fleet/state';
import { checkRevision, nodeLogPath, expandShape, shapeProblems, type FleetShape } from '../core/fleet/types';
import { API_VERSION, teardownSignal, type VmStatus } from '../core/api';
import { failureInfo } from './failure-info';
import { bootstrapPolling, bootstrapping } from './proxies';
import {
  applyShapeUpdate, fleetStatusQuery, fleetTeardownSignal, slotEventSignal,
  type FleetLogEntry, type FleetStatus, type FleetWorkflowInput, type SlotEvent, type SlotStatus,
} from '../core/fleet-api';
import { withTuning } from '../core/tuning';
import type { vmWorkflow } from './vm';

const LOG_KEEP = 100;
const iso = (ms: number): string => new Date(ms).toISOString();

/** `vm-<slot>-a<attempt>` → slot and attempt. */
function parseAttemptId(id: string): { slot: string; attempt: number } | undefined {
  const m = /^vm-(.+)-a(\d+)$/.exec(id);
  return m ? { slot: m[1]!, attempt: Number(m[2]) } : undefined;
}

function eventOfChild(e: SlotEvent): FleetEvent | undefined {
  const id = parseAttemptId(e.workflowId);
  if (!id) return undefined;
  if (e.stage === 'ready' && e.endpoint) {
    return { type: 'vmReady', ...id, endpoint: e.endpoint, ...(e.hostKey ? { hostKey: e.hostKey } : {}), ...(e.workerKeyFingerprint ? { workerKeyFingerprint: e.workerKeyFingerprint } : {}) };
  }
  if (e.stage === 'failed' || e.stage === 'lost' || e.stage === 'terminated' || e.stage === 'cancelled') {
    return { type: 'vmEnded', ...id, outcome: e.stage, ...(e.error ? { reason: `${e.error.kind}: ${e.error.message}` } : {}) };
  }
  if (e.stage === 'k8s-failed') return { type: 'vmEnded', ...id, outcome: 'failed', reason: 'k3s failed' };
  return undefined;
}

export async function fleetWorkflow(input: FleetWorkflowInput): Promise<FleetStatus> {
  const t = withFleetTuning(input.tuning);
  const vmTuning = withTuning(input.vmTuning);
  const problems = shapeProblems(input.carried?.desired ?? input.shape);
  if (problems.length) throw ApplicationFailure.create({ type: 'InvalidRequest', message: `invalid fleet shape: ${problems.join('; ')}`, nonRetryable: true });

  let desired: FleetShape = input.carried?.desired ?? input.shape;
  let down = input.carried?.down ?? false;
  let state: FleetState = input.carried?.state ?? emptyState(desired.name);
  const log: FleetLogEntry[] = input.carried?.log ?? [];
  let dirty = true;
  /** Workflow-local operations in flight (they do not survive continue-as-new). */
  let localOps = 0;
  const bootScopes = new Map<string, CancellationScope>();

  const note = (slot: string, attempt: number, what: string): void => {
    log.push({ at: iso(Date.now()), slot, attempt, what });
    if (log.length > LOG_KEEP) log.splice(0, log.length - LOG_KEEP);
  };
  const observe = (e: FleetEvent): void => {
    const before = state;
    state = fold(state, e, Date.now(), t);
    if (state !== before) {
      note(e.slot, e.attempt, e.type === 'vmEnded' ? `vm ${e.outcome}` : e.type === 'bootDone' ? `bootstrap ${e.stage}` : e.type === 'opFailed' ? `${e.op} failed: ${e.reason}` : e.type);
      dirty = true;
    }
  };
  const wanted = () => (down ? new Map() : expandShape(desired));

  setHandler(fleetStatusQuery, () => snapshot(state, desired, down, log, wanted()));
  setHandler(fleetTeardownSignal, () => {
    down = true;
    dirty = true;
  });
  setHandler(slotEventSignal, (e) => {
    const ev = eventOfChild(e);
    if (ev) observe(ev);
  });
  setHandler(
    applyShapeUpdate,
    (shape) => {
      const v = checkRevision(desired, shape);
      desired = shape;
      dirty = true;
      if (v.ok && v.changed) note('*', 0, `generation ${shape.generation} applied`);
      return { generation: shape.generation, changed: v.ok && v.changed };
    },
    {
      validator: (shape) => {
        if (down) throw new Error('the fleet is being torn down');
        const p = shapeProblems(shape);
        if (p.length) throw new Error(`invalid fleet shape: ${p.join('; ')}`);
        const v = checkRevision(desired, shape);
        if (!v.ok) throw new Error(v.reason);
      },
    },
  );
  // Temporal cancellation of the fleet = teardown (every slot is deleted first).
  CancellationScope.current().cancelRequested.catch(() => {
    down = true;
    dirty = true;
  });

  const act = bootstrapping;

  const targetOf = (r: SlotRecord): BootstrapTarget => ({
    endpoint: r.endpoint!,
    ...(r.hostKey ? { hostKey: r.hostKey } : {}),
    ...(r.workerKeyFingerprint ? { workerKey: { fingerprint: r.workerKeyFingerprint, vm: r.slot } } : {}),
    node: { fleet: desired.name, group: r.group, index: r.index, role: r.template.role, node: r.slot },
    spec: r.template.bootstrap!,
  });

  const track = (p: Promise<unknown>): void => {
    localOps += 1;
    void p.finally(() => {
      localOps -= 1;
      dirty = true;
    });
  };

  const dispatch = (a: Extract<Action, { attempt: number }>, r: SlotRecord): void => {
    const { slot, attempt } = a;
    const childId = attemptWorkflowId(slot, attempt);
    switch (a.kind) {
      case 'startVm':
        track(
          startChild<typeof vmWorkflow>('vmWorkflow', {
            workflowId: childId,
            args: [{ spec: { ...r.template.vm, name: slot }, tuning: vmTuning }],
            // The fleet continues-as-new while children live on; they report by signal.
            parentClosePolicy: ParentClosePolicy.ABANDON,
            staticSummary: `fleet ${desired.name}: slot ${slot}, attempt ${attempt}`,
          }).then(
            (h) => {
              observe({ type: 'vmStarted', slot, attempt });
              h.result().then(
                (s: VmStatus) => observe({ type: 'vmEnded', slot, attempt, outcome: s.stage === 'lost' ? 'lost' : s.stage === 'cancelled' ? 'cancelled' : 'terminated' }),
                (err: unknown) => observe({ type: 'vmEnded', slot, attempt, outcome: 'failed', reason: failureInfo(err).message }),
              );
            },
            (err: unknown) => observe({ type: 'opFailed', slot, attempt, op: 'startVm', reason: failureInfo(err).message }),
          ),
        );
        return;
      case 'teardownVm':
        // A child that is gone (closed) has already deleted everything it created.
        track(getExternalWorkflowHandle(childId).signal(teardownSignal).catch(() => observe({ type: 'vmEnded', slot, attempt, outcome: 'gone' })));
        return;
      case 'stopBootstrap':
        track(
          act(`stop bootstrap on ${slot}`, 60_000, 5).bootstrapStop(targetOf(r)).then(
            () => observe({ type: 'bootStopped', slot, attempt }),
            (err: unknown) => observe({ type: 'opFailed', slot, attempt, op: 'stopBootstrap', reason: failureInfo(err).message }),
          ),
        );
        return;
      case 'startBootstrap': {
        const target = targetOf(r);
        const timeoutMs = Math.round(target.spec.timeout * 1000);
        const scope = new CancellationScope();
        bootScopes.set(slot, scope);
        const run = async (): Promise<FleetEvent> => {
          await act(`verify ${slot}`, timeoutMs, 3).bootstrapVerify(target);
          observe({ type: 'bootObserved', slot, attempt, stage: 'starting' });
          const started = await act(`start bootstrap on ${slot}`, 60_000, 3).bootstrapStart(target);
          observe({ type: 'bootObserved', slot, attempt, stage: 'waiting-ready', startedAt: started.at });
          const ready = await bootstrapPolling(`wait until ${slot} is ready`, timeoutMs, t.readyPollMs).bootstrapAwaitReady(target);
          return { type: 'bootDone', slot, attempt, ok: true, stage: 'ready', ...seqsOf(ready) };
        };
        track(
          scope
            .run(run)
            .then(observe, (err: unknown) => {
              const f = failureInfo(err);
              const stage = f.cancelled ? 'cancelled' : f.type === 'Timeout' ? 'ready-timeout' : 'failed';
              observe({ type: 'bootDone', slot, attempt, ok: false, stage, reason: f.message });
            })
            .finally(() => bootScopes.delete(slot)),
        );
        return;
      }
    }
  };

  const result = await CancellationScope.nonCancellable(async () => {
    for (;;) {
      let wakeAt: number | undefined;
      dirty = false;
      const want = wanted();
      state = { ...state, observedGeneration: desired.generation };
      // Transitions complete a slot's step; passes repeat until only effects or waits are left.
      for (let n = 0; n < 100; n++) {
        const now = Date.now();
        const pass = reconcile(state, want, now);
        wakeAt = pass.wakeAt;
        let transitioned = false;
        for (const a of pass.actions) {
          state = applyAction(state, a, want, now, t);
          const r = state.slots[a.slot];
          note(a.slot, r?.attempt ?? 0, a.kind === 'beginDelete' ? `beginDelete (${a.why})` : a.kind);
          if (isEffect(a)) {
            if (r) dispatch(a, r);
          } else {
            transitioned = true;
            if (a.kind === 'beginDelete') bootScopes.get(a.slot)?.cancel();
          }
        }
        if (!transitioned) break;
      }
      const converged = !down && isConverged(state, want);
      setCurrentDetails(`**fleet ${desired.name}** — generation ${desired.generation}, ${converged ? 'converged' : 'converging'}${down ? ' (tearing down)' : ''}`);
      if (down && Object.keys(state.slots).length === 0 && localOps === 0) return 'done' as const;
      const info = workflowInfo();
      if ((info.continueAsNewSuggested || info.historyLength > t.continueAsNewAfterEvents) && localOps === 0) return 'continue' as const;
      const timeout = wakeAt === undefined ? undefined : Math.max(1, wakeAt - Date.now());
      await (timeout === undefined ? condition(() => dirty) : condition(() => dirty, timeout));
    }
  });

  await condition(allHandlersFinished);
  if (result === 'continue') {
    return continueAsNew<typeof fleetWorkflow>({ ...input, shape: desired, carried: { state, desired, down, log } });
  }
  return snapshot(state, desired, down, log, new Map());
}

function seqsOf(s: { lastStdoutSeq?: number; lastStderrSeq?: number }): { lastStdoutSeq?: number; lastStderrSeq?: number } {
  return { ...(s.lastStdoutSeq !== undefined ? { lastStdoutSeq: s.lastStdoutSeq } : {}), ...(s.lastStderrSeq !== undefined ? { lastStderrSeq: s.lastStderrSeq } : {}) };
}

function snapshot(state: FleetState, desired: FleetShape, down: boolean, log: FleetLogEntry[], want: ReturnType<typeof expandShape>): FleetStatus {
  const slots: SlotStatus[] = Object.values(state.slots)
    .sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : a.index - b.index))
    .map((r) => {
      const b = r.template.bootstrap;
      return {
        slot: r.slot, group: r.group, index: r.index, role: r.template.role, attempt: r.attempt,
        workflowId: attemptWorkflowId(r.slot, r.attempt), stage: r.stage, intent: r.intent, ready: r.ready,
        current: want.get(r.slot)?.key === r.key, failures: r.failures,
        ...(r.pending ? { pending: r.pending.op } : {}),
        ...(r.restartAt !== undefined && r.stage === 'destroyed' ? { restartAt: iso(r.restartAt) } : {}),
        ...(r.failedReason ? { failedReason: r.failedReason } : {}),
        ...(r.endpoint ? { endpoint: r.endpoint } : {}),
        ...(r.hostKey ? { hostKey: r.hostKey } : {}),
        ...(b
          ? {
              bootstrap: {
                state: r.boot.state, logPath: nodeLogPath(b, r.slot),
                ...(r.boot.stage ? { stage: r.boot.stage } : {}),
                ...seqsOf(r.boot),
                ...(r.boot.startedAt !== undefined ? { startedAt: iso(r.boot.startedAt) } : {}),
                ...(r.boot.readyAt !== undefined ? { readyAt: iso(r.boot.readyAt) } : {}),
              },
            }
          : {}),
      };
    });
  return {
    apiVersion: API_VERSION, name: desired.name, generation: desired.generation, observedGeneration: state.observedGeneration,
    converged: !down && isConverged(state, want), down, slots, log: [...log],
  };
}
