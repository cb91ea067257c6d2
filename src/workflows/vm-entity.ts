/**
 * VmEntity: the state and steps of one vmWorkflow run, as `FleetDriver` is for a fleet. It extends
 * `VmContext` (the live state launch, k3s and teardown share) with what only the entity needs:
 * whether the launch is over, which teardown requests it answered, why the instance was lost, and
 * what a k3s re-run needs. `launch` takes the VM to Ready, `stayReady` waits there until
 * something ends it; vm.ts registers the handlers and ends the run (./vm-end.ts).
 *
 * Determinism: the commands follow the order of the awaits below; changing it, or adding an
 * `await`, breaks saved histories.
 */
import { ApplicationFailure, condition, workflowInfo } from '@temporalio/workflow';
import type { InstanceLost, LaunchResult, RecoveryRecord, RetiringInstance, VmSpec, VmStatus } from '../core/api';
import { FAILURE_TYPES } from '../core/failures';
import { BACKSTOP_DETAIL, causeOfSignal, lossCauseOf, type LossCause } from '../core/loss';
import type { Capabilities } from '../core/provider';
import type { Tuning } from '../core/tuning';
import { checkBudget, nextBudgetWake } from './budget';
import { VmContext } from './context';
import { runK3s } from './k3s';
import { runLaunch } from './launch';
import { leaveWarningAt, warnLeave } from './reserved';
import { leaveState } from '../core/reserved-window';
import { reading } from './proxies';
import { countLaunch, recordReady } from './telemetry';
import { ensureWatcher, notifyParent } from './vm-notify';

/** State carried across continue-as-new (a Ready VM). */
export interface VmCarried {
  status: VmStatus;
  pollIntervalMs: number;
}

export interface VmWorkflowInput {
  spec: VmSpec;
  tuning?: Partial<Tuning>;
  /** Set only by continue-as-new. */
  carried?: VmCarried;
  /** Set only by a `--recover` relaunch (continue-as-new without `carried`): the losses so far. */
  recovered?: RecoveryRecord;
  /** Set only by a `--recover` replacement (src/core/recovery.ts, row `replace`): the preempted instance to delete once it is Ready. */
  retiring?: RetiringInstance;
}

/** Why the Ready stage ended. */
export type ReadyEnd = 'teardown' | 'cancel' | 'ttl' | 'budget' | 'lost' | 'continue' | 'retry-k8s';

export class VmEntity extends VmContext {
  /** Ready reached (in this run, or carried): a teardown then ends Ready instead of cancelling the launch. */
  private launched: boolean;
  /**
   * The teardown requests answered before Ready (each cancelled the launch); later ones end Ready.
   * Hazard: taken when the launch ends, not when the Ready wait starts: a teardown that arrives
   * while the VM tells its fleet it is ready (or re-runs k3s) would otherwise be counted as old
   * and lost, leaving the VM up.
   */
  private answeredTeardowns = 0;
  /** Set by the account watcher while the VM is up: its instance vanished or failed. */
  watcherLoss: LossCause | undefined;
  /** Set by the backstop health check when it saw the instance gone or not running. */
  private backstopLoss: LossCause | undefined;
  /** What a k3s re-run needs (this run only; after continue-as-new a re-run says so). */
  private lastLaunch: { caps: Capabilities; result: LaunchResult } | undefined;
  /** The cloud's poll interval (`Capabilities.pollIntervalMs`), carried across continue-as-new. */
  pollIntervalMs: number;

  constructor(private readonly input: VmWorkflowInput) {
    super(input.spec, input.tuning, input.carried?.status);
    this.launched = input.carried !== undefined;
    this.pollIntervalMs = input.carried?.pollIntervalMs ?? 5_000;
    if (!input.carried && input.recovered) this.status.recovered = input.recovered;
    if (!input.carried && input.retiring) this.status.retiring = input.retiring;
  }

  // ---- messages ----

  /** `down` while launching stops the launch (it compensates); while a compensation is leaked it only retries that teardown at once. */
  onTeardown(): void {
    this.teardownRequests += 1;
    if (!this.launched && this.status.stage !== 'leaked') this.requestCancel();
  }

  onRetryK8s(): void {
    if (this.status.stage === 'k8s-failed') this.k8sRetryRequests += 1;
  }

  /** The account watcher's signal, of either shape (src/core/loss.ts); only while the VM is up, the first one counts. */
  onInstanceLost(l: InstanceLost): void {
    if (this.status.stage === 'ready' || this.status.stage === 'k8s-failed') this.watcherLoss ??= causeOfSignal(l);
  }

  /** Why the VM was lost: the account watcher's cause, else the backstop health check's. */
  get lossCause(): LossCause {
    return this.watcherLoss ?? this.backstopLoss ?? { kind: 'vanished', detail: BACKSTOP_DETAIL };
  }

  /** A teardown or cancel arrived after the VM was Ready. */
  stopAskedSinceReady(): boolean {
    return this.teardownRequests > this.answeredTeardowns || this.cancelRequested;
  }

  /** What continue-as-new carries. */
  carried(): VmCarried {
    return { status: this.status, pollIntervalMs: this.pollIntervalMs };
  }

  // ---- the steps ----

  /** Launch (failover search) to Ready; a launch that failed throws LaunchFailed once the VM says so. */
  async launch(): Promise<'ready' | 'launch-cancelled'> {
    const outcome = await runLaunch(this);
    countLaunch(this.status, outcome.kind, outcome.kind === 'ready' ? outcome.result : undefined);
    if (outcome.kind === 'cancelled') return 'launch-cancelled';
    if (outcome.kind === 'failed') {
      this.setStage('failed', { error: { kind: outcome.errorKind, message: outcome.message }, endedAt: new Date().toISOString(), instanceIds: [] });
      await notifyParent(this);
      throw ApplicationFailure.create({ type: FAILURE_TYPES.LaunchFailed, message: outcome.message, nonRetryable: true, details: [outcome.details] });
    }
    await this.becomeReady(outcome);
    return 'ready';
  }

  /** Wait in Ready until something ends it; `start` again on a k8s-failed VM re-runs k3s and waits again. */
  async stayReady(): Promise<Exclude<ReadyEnd, 'retry-k8s'>> {
    for (;;) {
      const e = await this.waitInReady();
      if (e !== 'retry-k8s') return e;
      await this.rerunK3s();
    }
  }

  private async becomeReady(outcome: Extract<Awaited<ReturnType<typeof runLaunch>>, { kind: 'ready' }>): Promise<void> {
    const { result: r, capabilities: caps } = outcome;
    const spec = this.input.spec;
    this.lastLaunch = { caps, result: r };
    this.pollIntervalMs = caps.pollIntervalMs;
    const k8sWanted = spec.k8s !== 'off';
    // In a reservation's window: the TTL is capped at its end, with a warning before (src/core/reserved-window.ts).
    const leave = r.offer.reservation ? leaveState(r.offer, spec.ttlMs, Date.now(), this.tuning) : undefined;
    const ready = {
      readyAt: new Date().toISOString(),
      endpoint: r.endpoint,
      hostKeyFingerprint: r.hostKeyFingerprint,
      hostKey: r.hostKey,
      ...(r.workerKeyFingerprint ? { workerKeyFingerprint: r.workerKeyFingerprint } : {}),
      instanceIds: [r.instanceId],
      ...(r.createdBy ? { createdBy: r.createdBy } : {}),
      ...(spec.ttlMs ? { ttlExpiresAt: new Date(Date.now() + spec.ttlMs).toISOString() } : {}),
      ...(leave ? { ttlExpiresAt: leave.ttlAt, reserved: { ...this.status.reserved, leave } } : {}),
    };
    if (caps.k8s && k8sWanted) {
      // k3s: stage `k8s` while installing; a failure leaves the VM up as `k8s-failed`.
      this.setStage('k8s', { ...ready, k8s: { enabled: true, note: 'k3s: starting' } });
      const k = await runK3s(this, { caps, result: r, bootRoute: caps.bootScript, expectGpus: r.offer.gpu?.count ?? 0 });
      if (k.kind !== 'cancelled') this.setStage(k.kind === 'ready' ? 'ready' : 'k8s-failed', { k8s: k.k8s });
    } else {
      const note = k8sWanted ? `k3s skipped: ${r.offer.cloud} does not support it` : 'k3s off (--no-k8s)';
      this.setStage('ready', { ...ready, k8s: { enabled: false, note } });
    }
    this.launched = true;
    this.answeredTeardowns = this.teardownRequests;
    recordReady(this.status);
    await notifyParent(this);
    await ensureWatcher(this);
  }

  /** `start` again on a k8s-failed VM re-enters at CheckBootInstall (SSH push if needed). */
  private async rerunK3s(): Promise<void> {
    const last = this.lastLaunch;
    if (!last) {
      this.setStage('k8s-failed', { k8s: { enabled: true, note: 'k3s re-run unavailable after continue-as-new; run provision down and start again' } });
      return;
    }
    this.setStage('k8s', { k8s: { enabled: true, note: 'k3s: re-running' } });
    const k = await runK3s(this, { caps: last.caps, result: last.result, bootRoute: false, expectGpus: last.result.offer.gpu?.count ?? 0 });
    if (k.kind !== 'cancelled') this.setStage(k.kind === 'ready' ? 'ready' : 'k8s-failed', { k8s: k.k8s });
  }

  /** One Ready wait: teardown, cancel, TTL, budget, a lost instance, a k3s re-run asked, or a long history. */
  private async waitInReady(): Promise<ReadyEnd> {
    const t = this.tuning;
    const base = this.answeredTeardowns;
    const ttlAt = this.status.ttlExpiresAt ? Date.parse(this.status.ttlExpiresAt) : undefined;
    const k8sBase = this.k8sRetryRequests;
    for (;;) {
      if (checkBudget(this)) return 'budget';
      const budgetAt = nextBudgetWake(this) ?? Infinity;
      const warnAt = leaveWarningAt(this);
      const wait = Math.max(
        1,
        Math.min(ttlAt === undefined ? Infinity : ttlAt - Date.now(), budgetAt - Date.now(), (warnAt ?? Infinity) - Date.now(), t.healthIntervalMs),
      );
      const woke = await condition(
        () => this.teardownRequests > base || this.cancelRequested || this.k8sRetryRequests > k8sBase || this.watcherLoss !== undefined,
        wait,
        {
          summary:
            warnAt === undefined
              ? 'ready: wait for teardown, TTL, a lost instance or health check'
              : `ready: wait for the window's warning at ${this.status.reserved?.leave?.warnAt}`,
        },
      );
      if (woke) return this.cancelRequested ? 'cancel' : this.teardownRequests > base ? 'teardown' : this.watcherLoss ? 'lost' : 'retry-k8s';
      if (warnLeave(this)) continue;
      if (ttlAt !== undefined && Date.now() >= ttlAt) return 'ttl';
      if (checkBudget(this)) return 'budget';
      if (await this.backstopSawLoss()) return 'lost';
      const info = workflowInfo();
      if (info.continueAsNewSuggested || info.historyLength > t.continueAsNewAfterEvents) return 'continue';
    }
  }

  /** The rare backstop health check; one that cannot observe says nothing about the VM. */
  private async backstopSawLoss(): Promise<boolean> {
    const s = this.status;
    if (!s.location) return false;
    try {
      const seen = await reading(this.tuning, `health check ${s.name}`, s.location.cloud).observeVm(s.location, s.name);
      const mine = seen.find((o) => s.instanceIds.includes(o.id)) ?? seen[0];
      if (mine !== undefined && (mine.status === 'Running' || mine.status === 'Pending')) return false;
      this.backstopLoss = { kind: lossCauseOf(mine ? [mine] : []).kind, detail: BACKSTOP_DETAIL };
      return true;
    } catch {
      return false;
    }
  }
}
