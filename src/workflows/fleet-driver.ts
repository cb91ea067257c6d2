/**
 * FleetDriver: the state and decisions of one fleetWorkflow run, as `VmContext` is for a VM. It
 * holds the desired shape, the folded observations (`FleetState`) and a bounded log; `observe`
 * folds an event, `reconcile` runs the pure reconcile (`src/core/fleet/reconcile.ts`) until only
 * effects or waits are left and `dispatch`es each effect as a child workflow, a signal or
 * bootstrap activities, whose outcomes come back through `observe`. `track` counts those
 * workflow-local operations (they do not survive continue-as-new).
 *
 * Determinism: the order of commands follows from the order of `dispatch` calls and of the
 * promise callbacks below; changing either (even adding an `await`) breaks saved histories.
 */
import { CancellationScope, ParentClosePolicy, condition, getExternalWorkflowHandle, setCurrentDetails, startChild, workflowInfo } from '@temporalio/workflow';
import type { BootstrapTarget } from '../activities/bootstrap';
import { withFleetTuning, type FleetTuning } from '../core/fleet/backoff';
import { isConverged, reconcile } from '../core/fleet/reconcile';
import {
  applyAction,
  attemptWorkflowId,
  carryOver,
  emptyState,
  fold,
  isEffect,
  type Action,
  type FleetEvent,
  type FleetState,
  type SlotRecord,
} from '../core/fleet/state';
import { checkRevision, expandShape, shapeProblems, type FleetShape } from '../core/fleet/types';
import { teardownSignal, type VmStatus } from '../core/api';
import type { ApplyShapeResult, FleetCarried, FleetLogEntry, FleetStatus, FleetWorkflowInput, SlotEvent } from '../core/fleet-api';
import { eventOfChild, noteOf } from '../core/fleet/child-events';
import { startAttributes } from '../core/search-attributes';
import { withTuning, type Tuning } from '../core/tuning';
import { SDK_FAILURE_KINDS } from '../core/failures';
import { failureInfo } from './failure-info';
import { bootstrapPolling, bootstrapping } from './proxies';
import type { vmWorkflow } from './vm';
import { seqsOf, snapshot, type Wanted } from '../core/fleet/status';

const LOG_KEEP = 100;

export class FleetDriver {
  private readonly t: FleetTuning;
  private readonly vmTuning: Tuning;
  desired: FleetShape;
  private down: boolean;
  private state: FleetState;
  private readonly log: FleetLogEntry[];
  /** Something changed since the last `reconcile`. */
  private dirty = true;
  /** Workflow-local operations in flight (they do not survive continue-as-new). */
  private localOps = 0;
  /** Running bootstraps, by attempt (workflow ID): a stale attempt never touches a newer one's scope. */
  private readonly bootScopes = new Map<string, CancellationScope>();

  constructor(input: FleetWorkflowInput) {
    this.t = withFleetTuning(input.tuning);
    this.vmTuning = withTuning(input.vmTuning);
    this.desired = input.carried?.desired ?? input.shape;
    this.down = input.carried?.down ?? false;
    this.state = input.carried?.state ?? emptyState(this.desired.name);
    this.log = input.carried?.log ?? [];
  }

  /** What continue-as-new carries (the next run awaits no child's completion). */
  carried(): FleetCarried {
    return { state: carryOver(this.state), desired: this.desired, down: this.down, log: this.log };
  }

  // ---- messages ----

  /** The `teardown` signal, or Temporal's cancellation: delete every slot, then end. */
  requestDown(): void {
    this.down = true;
    this.dirty = true;
  }

  /** A child's `slotEvent` signal. */
  onSlotEvent(e: SlotEvent): void {
    const ev = eventOfChild(e);
    if (ev) this.observe(ev);
  }

  /** The `applyShape` Update's validator: throws to reject the shape. */
  validateShape(shape: FleetShape): void {
    if (this.down) throw new Error('the fleet is being torn down');
    const p = shapeProblems(shape);
    if (p.length) throw new Error(`invalid fleet shape: ${p.join('; ')}`);
    const v = checkRevision(this.desired, shape);
    if (!v.ok) throw new Error(v.reason);
  }

  /** The `applyShape` Update (after its validator). */
  applyShape(shape: FleetShape): ApplyShapeResult {
    const v = checkRevision(this.desired, shape);
    this.desired = shape;
    this.dirty = true;
    if (v.ok && v.changed) this.note('*', 0, `generation ${shape.generation} applied`);
    return { generation: shape.generation, changed: v.ok && v.changed };
  }

  // ---- the loop ----

  /**
   * Reconcile passes until only effects or waits are left (transitions complete a slot's step),
   * dispatching every effect. Returns when the earliest stored deadline falls, if any.
   */
  reconcile(): number | undefined {
    let wakeAt: number | undefined;
    this.dirty = false;
    const want = this.wanted();
    this.state = { ...this.state, observedGeneration: this.desired.generation };
    for (let n = 0; n < 100; n++) {
      const now = Date.now();
      const pass = reconcile(this.state, want, now);
      wakeAt = pass.wakeAt;
      let transitioned = false;
      for (const a of pass.actions) {
        this.state = applyAction(this.state, a, want, now, this.t);
        const r = this.state.slots[a.slot];
        this.note(a.slot, r?.attempt ?? 0, a.kind === 'beginDelete' ? `beginDelete (${a.why})` : a.kind);
        if (isEffect(a)) {
          if (r) this.dispatch(a, r);
        } else {
          transitioned = true;
          if (a.kind === 'beginDelete' && r) this.bootScopes.get(attemptWorkflowId(r.slot, r.attempt))?.cancel();
        }
      }
      if (!transitioned) break;
    }
    const converged = !this.down && isConverged(this.state, want);
    const d = this.desired;
    setCurrentDetails(`**fleet ${d.name}** — generation ${d.generation}, ${converged ? 'converged' : 'converging'}${this.down ? ' (tearing down)' : ''}`);
    return wakeAt;
  }

  /** Torn down: no slot left and nothing in flight. */
  finished(): boolean {
    return this.down && Object.keys(this.state.slots).length === 0 && this.localOps === 0;
  }

  /** The history is long (or the server says so) and nothing workflow-local is in flight. */
  shouldContinueAsNew(): boolean {
    const info = workflowInfo();
    return (info.continueAsNewSuggested || info.historyLength > this.t.continueAsNewAfterEvents) && this.localOps === 0;
  }

  /** Waits for a change, or until `wakeAt`. */
  async changed(wakeAt: number | undefined): Promise<void> {
    const timeout = wakeAt === undefined ? undefined : Math.max(1, wakeAt - Date.now());
    await (timeout === undefined ? condition(() => this.dirty) : condition(() => this.dirty, timeout));
  }

  /** The `status` query's snapshot (`want`: the slots wanted now; none once ended). */
  status(want: Wanted = this.wanted()): FleetStatus {
    return snapshot(this.state, this.desired, this.down, this.log, want);
  }

  // ---- observations and effects ----

  private wanted(): Wanted {
    return this.down ? new Map() : expandShape(this.desired);
  }

  private note(slot: string, attempt: number, what: string): void {
    this.log.push({ at: new Date(Date.now()).toISOString(), slot, attempt, what });
    if (this.log.length > LOG_KEEP) this.log.splice(0, this.log.length - LOG_KEEP);
  }

  private observe(e: FleetEvent): void {
    const before = this.state;
    this.state = fold(this.state, e, Date.now(), this.t);
    if (this.state !== before) {
      this.note(e.slot, e.attempt, noteOf(e));
      this.dirty = true;
    }
  }

  private track(p: Promise<unknown>): void {
    this.localOps += 1;
    void p.finally(() => {
      this.localOps -= 1;
      this.dirty = true;
    });
  }

  private targetOf(r: SlotRecord): BootstrapTarget {
    return {
      endpoint: r.endpoint!,
      ...(r.hostKey ? { hostKey: r.hostKey } : {}),
      ...(r.workerKeyFingerprint ? { workerKey: { fingerprint: r.workerKeyFingerprint, vm: r.slot } } : {}),
      node: { fleet: this.desired.name, group: r.group, index: r.index, role: r.template.role, node: r.slot },
      spec: r.template.bootstrap!,
    };
  }

  private dispatch(a: Extract<Action, { attempt: number }>, r: SlotRecord): void {
    const { slot, attempt } = a;
    const childId = attemptWorkflowId(slot, attempt);
    const observe = (e: FleetEvent): void => this.observe(e);
    switch (a.kind) {
      case 'startVm':
        this.startVm(slot, attempt, r);
        return;
      case 'teardownVm':
        // The signal fails only when no such child is open (closed: it deleted everything it made; or never started).
        this.track(
          getExternalWorkflowHandle(childId)
            .signal(teardownSignal)
            .then(
              () => observe({ type: 'teardownSent', slot, attempt }),
              () => observe({ type: 'vmEnded', slot, attempt, outcome: 'gone', closed: true }),
            ),
        );
        return;
      case 'stopBootstrap':
        this.track(
          bootstrapping(`stop bootstrap on ${slot}`, 60_000, 5)
            .bootstrapStop(this.targetOf(r))
            .then(
              () => observe({ type: 'bootStopped', slot, attempt }),
              (err: unknown) => observe({ type: 'opFailed', slot, attempt, op: 'stopBootstrap', reason: failureInfo(err).message }),
            ),
        );
        return;
      case 'startBootstrap':
        this.startBootstrap(slot, attempt, r);
        return;
    }
  }

  /** The slot's attempt as a child vmWorkflow; its start and its close come back as events. */
  private startVm(slot: string, attempt: number, r: SlotRecord): void {
    const childId = attemptWorkflowId(slot, attempt);
    const observe = (e: FleetEvent): void => this.observe(e);
    this.track(
      startChild<typeof vmWorkflow>('vmWorkflow', {
        workflowId: childId,
        args: [{ spec: { ...r.template.vm, name: slot }, tuning: this.vmTuning }],
        // The fleet continues-as-new while children live on; they report by signal. It never
        // ends with a child open: a slot is destroyed only once its child has closed.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: startAttributes(slot),
        staticSummary: `fleet ${this.desired.name}: slot ${slot}, attempt ${attempt}`,
      }).then(
        (h) => {
          observe({ type: 'vmStarted', slot, attempt });
          h.result().then(
            (s: VmStatus) =>
              observe({
                type: 'vmEnded',
                slot,
                attempt,
                outcome: s.stage === 'lost' ? 'lost' : s.stage === 'cancelled' ? 'cancelled' : 'terminated',
                closed: true,
              }),
            (err: unknown) => observe({ type: 'vmEnded', slot, attempt, outcome: 'failed', reason: failureInfo(err).message, closed: true }),
          );
        },
        (err: unknown) => observe({ type: 'opFailed', slot, attempt, op: 'startVm', reason: failureInfo(err).message }),
      ),
    );
  }

  /** Verify, start and await the node's bootstrap, in a scope the slot's teardown can cancel. */
  private startBootstrap(slot: string, attempt: number, r: SlotRecord): void {
    const childId = attemptWorkflowId(slot, attempt);
    const observe = (e: FleetEvent): void => this.observe(e);
    const target = this.targetOf(r);
    const timeoutMs = Math.round(target.spec.timeout * 1000);
    const scope = new CancellationScope();
    this.bootScopes.set(childId, scope);
    const run = async (): Promise<FleetEvent> => {
      await bootstrapping(`verify ${slot}`, timeoutMs, 3).bootstrapVerify(target);
      observe({ type: 'bootObserved', slot, attempt, stage: 'starting' });
      const started = await bootstrapping(`start bootstrap on ${slot}`, 60_000, 3).bootstrapStart(target);
      observe({ type: 'bootObserved', slot, attempt, stage: 'waiting-ready', startedAt: started.at });
      const ready = await bootstrapPolling(`wait until ${slot} is ready`, timeoutMs, this.t.readyPollMs).bootstrapAwaitReady(target);
      return { type: 'bootDone', slot, attempt, ok: true, stage: 'ready', ...seqsOf(ready) };
    };
    this.track(
      scope
        .run(run)
        .then(observe, (err: unknown) => {
          const f = failureInfo(err);
          const stage = f.cancelled ? 'cancelled' : f.type === SDK_FAILURE_KINDS.Timeout ? 'ready-timeout' : 'failed';
          observe({ type: 'bootDone', slot, attempt, ok: false, stage, reason: f.message });
        })
        .finally(() => this.bootScopes.delete(childId)),
    );
  }
}
