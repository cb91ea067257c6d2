/**
 * vmWorkflow (ID `vm-<name>`): the VM entity. Launch (failover search) → Ready (waits for
 * teardown, cancel, TTL, the account watcher's `instanceLost`, or the rare backstop health check) →
 * teardown. Lives as long as the VM, using continue-as-new to keep its history bounded; with
 * `--recover` a lost VM continues as new without `carried`, i.e. launches again (./recovery.ts).
 */
import {
  ApplicationFailure,
  CancelledFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../core/failures';
import { K3S_PATCH } from '../core/k3s-access';
import type { Capabilities } from '../core/provider';
import {
  cancelSignal,
  instanceLostSignal,
  retryK8sSignal,
  statusQuery,
  teardownSignal,
  type LaunchResult,
  type RecoveryRecord,
  type VmSpec,
  type VmStatus,
} from '../core/api';
import { BACKSTOP_DETAIL, causeOfSignal, lossCauseOf, lossMessage, type LossCause } from '../core/loss';
import { WATCHER_PATCH } from '../core/patches';
import { reading, watching } from './proxies';
import { VmContext } from './context';
import { runK3s } from './k3s';
import { runLaunch } from './launch';
import { runTeardown } from './teardown';
import { checkBudget, nextBudgetWake } from './budget';
import { afterLoss, recoveryMemo } from './recovery';
import { countLaunch, recordGone, recordReady } from './telemetry';
import { slotEventSignal } from '../core/fleet-api';
import type { Tuning } from '../core/tuning';

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
}

type ReadyEnd = 'teardown' | 'cancel' | 'ttl' | 'budget' | 'lost' | 'continue' | 'retry-k8s';

/** The backstop health check: the loss it sees, or undefined (healthy, or it could not look). */
async function backstopLoss(ctx: VmContext): Promise<LossCause | undefined> {
  const s = ctx.status;
  if (!s.location) return undefined;
  try {
    const seen = await reading(ctx.tuning, `health check ${s.name}`, s.location.cloud).observeVm(s.location, s.name);
    const mine = seen.find((o) => s.instanceIds.includes(o.id)) ?? seen[0];
    if (mine !== undefined && (mine.status === 'Running' || mine.status === 'Pending')) return undefined;
    return { kind: lossCauseOf(mine ? [mine] : []).kind, detail: BACKSTOP_DETAIL };
  } catch {
    return undefined; // a health check that cannot observe says nothing about the VM
  }
}

/**
 * `base`: the teardown requests already answered (by cancelling the launch). Hazard: it must be
 * taken when the launch ends, not here: a teardown that arrives while the VM tells its fleet it
 * is ready (or re-runs k3s) would otherwise be counted as old and lost, leaving the VM up.
 */
async function waitInReady(ctx: VmContext, base: number, loss: { watcher?: LossCause; backstop?: LossCause }): Promise<ReadyEnd> {
  const lost = (): LossCause | undefined => loss.watcher;
  const t = ctx.tuning;
  const ttlAt = ctx.status.ttlExpiresAt ? Date.parse(ctx.status.ttlExpiresAt) : undefined;
  const k8sBase = ctx.k8sRetryRequests;
  for (;;) {
    if (checkBudget(ctx)) return 'budget';
    const budgetAt = nextBudgetWake(ctx) ?? Infinity;
    const wait = Math.max(1, Math.min(ttlAt === undefined ? Infinity : ttlAt - Date.now(), budgetAt - Date.now(), t.healthIntervalMs));
    const woke = await condition(() => ctx.teardownRequests > base || ctx.cancelRequested || ctx.k8sRetryRequests > k8sBase || lost() !== undefined, wait, {
      summary: 'ready: wait for teardown, TTL, a lost instance or health check',
    });
    if (woke) return ctx.cancelRequested ? 'cancel' : ctx.teardownRequests > base ? 'teardown' : lost() ? 'lost' : 'retry-k8s';
    if (ttlAt !== undefined && Date.now() >= ttlAt) return 'ttl';
    if (checkBudget(ctx)) return 'budget';
    loss.backstop = await backstopLoss(ctx);
    if (loss.backstop) return 'lost';
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > t.continueAsNewAfterEvents) return 'continue';
  }
}

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  const ctx = new VmContext(input.spec, input.tuning, input.carried?.status);
  if (!input.carried && input.recovered) ctx.status.recovered = input.recovered;
  let launched = input.carried !== undefined;
  /** Teardown requests answered before Ready (each cancelled the launch); later ones end Ready. */
  let answeredTeardowns = 0;
  setHandler(statusQuery, () => ctx.status);
  setHandler(teardownSignal, () => {
    ctx.teardownRequests += 1;
    // `down` while launching stops the launch (it compensates). While a compensation is leaked,
    // the signal only retries that teardown at once, and the search goes on once it heals.
    if (!launched && ctx.status.stage !== 'leaked') ctx.requestCancel();
  });
  setHandler(cancelSignal, () => ctx.requestCancel());
  setHandler(retryK8sSignal, () => {
    if (ctx.status.stage === 'k8s-failed') ctx.k8sRetryRequests += 1;
  });
  /** `watcher`: set by the account watcher while the VM is up (its instance vanished or failed); `backstop`: by the health check. */
  const loss: { watcher?: LossCause; backstop?: LossCause } = {};
  setHandler(instanceLostSignal, (l) => {
    if (ctx.status.stage === 'ready' || ctx.status.stage === 'k8s-failed') loss.watcher ??= causeOfSignal(l);
  });
  CancellationScope.current().cancelRequested.catch(() => ctx.requestCancel(true));

  /** What a k3s re-run needs (this run only; after continue-as-new a re-run says so). */
  let lastLaunch: { caps: Capabilities; result: LaunchResult } | undefined;
  let pollIntervalMs = input.carried?.pollIntervalMs ?? 5_000;
  const end = await CancellationScope.nonCancellable(async (): Promise<ReadyEnd | 'launch-cancelled'> => {
    if (!input.carried) {
      const outcome = await runLaunch(ctx);
      countLaunch(ctx.status, outcome.kind, outcome.kind === 'ready' ? outcome.result : undefined);
      if (outcome.kind === 'cancelled') return 'launch-cancelled';
      if (outcome.kind === 'failed') {
        ctx.setStage('failed', { error: { kind: outcome.errorKind, message: outcome.message }, endedAt: new Date().toISOString(), instanceIds: [] });
        await notifyParent(ctx);
        throw ApplicationFailure.create({ type: FAILURE_TYPES.LaunchFailed, message: outcome.message, nonRetryable: true, details: [outcome.details] });
      }
      const r = outcome.result;
      const caps: Capabilities = outcome.capabilities;
      lastLaunch = { caps, result: r };
      pollIntervalMs = caps.pollIntervalMs;
      const readyAt = new Date().toISOString();
      const k8sWanted = input.spec.k8s !== 'off';
      const ready = {
        readyAt,
        endpoint: r.endpoint,
        hostKeyFingerprint: r.hostKeyFingerprint,
        hostKey: r.hostKey,
        ...(r.workerKeyFingerprint ? { workerKeyFingerprint: r.workerKeyFingerprint } : {}),
        instanceIds: [r.instanceId],
        ...(r.createdBy ? { createdBy: r.createdBy } : {}),
        ...(input.spec.ttlMs ? { ttlExpiresAt: new Date(Date.now() + input.spec.ttlMs).toISOString() } : {}),
      };
      if (caps.k8s && k8sWanted && patched(K3S_PATCH)) {
        // k3s: stage `k8s` while installing; a failure leaves the VM up as `k8s-failed`.
        ctx.setStage('k8s', { ...ready, k8s: { enabled: true, note: 'k3s: starting' } });
        const k = await runK3s(ctx, { caps, result: r, bootRoute: caps.bootScript, expectGpus: r.offer.gpu?.count ?? 0 });
        if (k.kind !== 'cancelled') ctx.setStage(k.kind === 'ready' ? 'ready' : 'k8s-failed', { k8s: k.k8s });
      } else {
        ctx.setStage('ready', {
          ...ready,
          k8s:
            caps.k8s && k8sWanted
              ? { enabled: false, note: 'k3s not run: this VM was started before k3s support' }
              : { enabled: false, note: k8sWanted ? `k3s skipped: ${r.offer.cloud} does not support it` : 'k3s off (--no-k8s)' },
        });
      }
      launched = true;
      answeredTeardowns = ctx.teardownRequests;
      recordReady(ctx.status);
      await notifyParent(ctx);
      if (patched(WATCHER_PATCH)) await ensureWatcher(ctx);
    }
    for (;;) {
      const e = await waitInReady(ctx, answeredTeardowns, loss);
      if (e !== 'retry-k8s') return e;
      // `start` again on a k8s-failed VM re-enters at CheckBootInstall (SSH push if needed).
      if (!lastLaunch) {
        ctx.setStage('k8s-failed', { k8s: { enabled: true, note: 'k3s re-run unavailable after continue-as-new; run provision down and start again' } });
        continue;
      }
      ctx.setStage('k8s', { k8s: { enabled: true, note: 'k3s: re-running' } });
      const k = await runK3s(ctx, { caps: lastLaunch.caps, result: lastLaunch.result, bootRoute: false, expectGpus: lastLaunch.result.offer.gpu?.count ?? 0 });
      if (k.kind !== 'cancelled') ctx.setStage(k.kind === 'ready' ? 'ready' : 'k8s-failed', { k8s: k.k8s });
    }
  });

  const endedAtMs = Date.now();
  if (end === 'continue') {
    await condition(allHandlersFinished);
    return makeContinueAsNewFunc<typeof vmWorkflow>(recoveryMemo(ctx.status.recovered))({
      spec: input.spec,
      ...(input.tuning ? { tuning: input.tuning } : {}),
      carried: { status: ctx.status, pollIntervalMs },
    });
  }
  if (end !== 'launch-cancelled') {
    const s = ctx.status;
    const cause = loss.watcher ?? loss.backstop;
    ctx.setStage(
      end === 'lost' ? 'lost' : 'tearing-down',
      end !== 'lost'
        ? {}
        : { ...(loss.watcher ? { error: { kind: 'InstanceLost', message: lossMessage(loss.watcher) } } : {}), ...(cause ? { lossCause: cause } : {}) },
    );
    if (s.location) {
      const sinceMs = Date.now();
      await runTeardown(ctx, {
        at: s.location,
        vmName: s.name,
        instanceIds: s.instanceIds,
        mode: 'full',
        pollIntervalMs,
        ...(s.createdBy ? { idempotencyKeys: [s.createdBy] } : {}),
      });
      recordGone(s, s.location.cloud, sinceMs);
    }
  }
  if (end === 'lost' && input.spec.recover) {
    await condition(allHandlersFinished);
    const stopAsked = ctx.teardownRequests > answeredTeardowns || ctx.cancelRequested;
    const recovered = afterLoss(ctx, loss.watcher ?? loss.backstop ?? { kind: 'vanished', detail: BACKSTOP_DETAIL }, stopAsked, endedAtMs);
    if (recovered)
      return makeContinueAsNewFunc<typeof vmWorkflow>(recoveryMemo(recovered))({
        spec: input.spec,
        ...(input.tuning ? { tuning: input.tuning } : {}),
        recovered,
      });
  }
  const final = end === 'lost' ? 'lost' : ctx.cancelRequested ? 'cancelled' : 'terminated';
  ctx.setStage(final, { endedAt: new Date().toISOString(), instanceIds: [] });
  await notifyParent(ctx);
  if (ctx.temporalCancelled) throw new CancelledFailure('cancelled; everything this VM created was deleted');
  return ctx.status;
}

/** Make sure the account watcher of this VM's cloud and region runs; a failure only costs the fast loss detection. */
async function ensureWatcher(ctx: VmContext): Promise<void> {
  const at = ctx.status.location;
  if (!at) return;
  try {
    await watching(`account watcher of ${at.cloud}/${at.region}`).ensureWatcher({
      at: { cloud: at.cloud, region: at.region },
      taskQueue: workflowInfo().taskQueue,
      vmName: ctx.status.name,
    });
  } catch {
    // The backstop health check still notices a lost VM.
  }
}

// ---- Fleet slots: a vmWorkflow started by a fleet reports `ready` and its end to it. ----
// Only when there is a parent: standalone VMs (and every saved history) issue no extra command.

/** Signal the parent fleet (by workflow ID, so it reaches its current run) with this attempt's stage. */
async function notifyParent(ctx: VmContext): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  const s = ctx.status;
  try {
    await getExternalWorkflowHandle(parent.workflowId).signal(slotEventSignal, {
      workflowId: workflowInfo().workflowId,
      stage: s.stage,
      ...(s.endpoint ? { endpoint: s.endpoint } : {}),
      ...(s.hostKey ? { hostKey: s.hostKey } : {}),
      ...(s.workerKeyFingerprint ? { workerKeyFingerprint: s.workerKeyFingerprint } : {}),
      ...(s.error ? { error: s.error } : {}),
      ...(s.budget?.reachedAt && s.stage === 'terminated' ? { budgetReached: true } : {}),
    });
  } catch {
    // The fleet has ended: nobody is left to tell.
  }
}
