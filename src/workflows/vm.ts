/**
 * vmWorkflow (ID `vm-<name>`): the VM entity. Launch (failover search) → Ready (waits for
 * teardown, cancel, TTL, or a health check that finds the VM gone) → teardown. Lives as long as
 * the VM, using continue-as-new to keep its history bounded.
 */
import {
  ApplicationFailure, CancelledFailure, CancellationScope, allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo,
} from '@temporalio/workflow';
import type { Capabilities } from '../providers/types';
import { cancelSignal, statusQuery, teardownSignal, type VmSpec, type VmStatus } from './api';
import { reading } from './activities';
import { VmContext } from './context';
import { runLaunch } from './launch';
import { runTeardown } from './teardown';
import type { Tuning } from './tuning';

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
}

type ReadyEnd = 'teardown' | 'cancel' | 'ttl' | 'lost' | 'continue';

async function healthy(ctx: VmContext): Promise<boolean> {
  const s = ctx.status;
  if (!s.location) return true;
  try {
    const seen = await reading(ctx.tuning, `health check ${s.name}`).observeVm(s.location, s.name);
    const mine = seen.find((o) => s.instanceIds.includes(o.id)) ?? seen[0];
    return mine !== undefined && (mine.status === 'Running' || mine.status === 'Pending');
  } catch {
    return true; // a health check that cannot observe says nothing about the VM
  }
}

async function waitInReady(ctx: VmContext): Promise<ReadyEnd> {
  const t = ctx.tuning;
  const ttlAt = ctx.status.ttlExpiresAt ? Date.parse(ctx.status.ttlExpiresAt) : undefined;
  const base = ctx.teardownRequests;
  for (;;) {
    const wait = Math.max(1, Math.min(ttlAt === undefined ? Infinity : ttlAt - Date.now(), t.healthIntervalMs));
    const woke = await condition(() => ctx.teardownRequests > base || ctx.cancelRequested, wait, { summary: 'ready: wait for teardown, TTL or health check' });
    if (woke) return ctx.cancelRequested ? 'cancel' : 'teardown';
    if (ttlAt !== undefined && Date.now() >= ttlAt) return 'ttl';
    if (!(await healthy(ctx))) return 'lost';
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > t.continueAsNewAfterEvents) return 'continue';
  }
}

export async function vmWorkflow(input: VmWorkflowInput): Promise<VmStatus> {
  const ctx = new VmContext(input.spec, input.tuning, input.carried?.status);
  let launched = input.carried !== undefined;
  setHandler(statusQuery, () => ctx.status);
  setHandler(teardownSignal, () => {
    ctx.teardownRequests += 1;
    // `down` while launching stops the launch (it compensates). While a compensation is leaked,
    // the signal only retries that teardown at once, and the search goes on once it heals (DESIGN §2).
    if (!launched && ctx.status.stage !== 'leaked') ctx.requestCancel();
  });
  setHandler(cancelSignal, () => ctx.requestCancel());
  CancellationScope.current().cancelRequested.catch(() => ctx.requestCancel(true));

  let pollIntervalMs = input.carried?.pollIntervalMs ?? 5_000;
  const end = await CancellationScope.nonCancellable(async (): Promise<ReadyEnd | 'launch-cancelled'> => {
    if (!input.carried) {
      const outcome = await runLaunch(ctx);
      if (outcome.kind === 'cancelled') return 'launch-cancelled';
      if (outcome.kind === 'failed') {
        ctx.setStage('failed', { error: { kind: outcome.errorKind, message: outcome.message }, endedAt: new Date().toISOString(), instanceIds: [] });
        throw ApplicationFailure.create({ type: 'LaunchFailed', message: outcome.message, nonRetryable: true, details: [outcome.details] });
      }
      const r = outcome.result;
      const caps: Capabilities = outcome.capabilities;
      pollIntervalMs = caps.pollIntervalMs;
      const readyAt = new Date().toISOString();
      const k8sWanted = input.spec.k8s !== 'off';
      ctx.setStage('ready', {
        readyAt,
        endpoint: r.endpoint,
        hostKeyFingerprint: r.hostKeyFingerprint,
        hostKey: r.hostKey,
        instanceIds: [r.instanceId],
        ...(input.spec.ttlMs ? { ttlExpiresAt: new Date(Date.now() + input.spec.ttlMs).toISOString() } : {}),
        k8s: caps.k8s && k8sWanted
          ? { enabled: false, note: 'k3s is supported on this cloud but not installed by this build' }
          : { enabled: false, note: k8sWanted ? `k3s skipped: ${r.offer.cloud} does not support it` : 'k3s off (--no-k8s)' },
      });
      launched = true;
    }
    return waitInReady(ctx);
  });

  if (end === 'continue') {
    await condition(allHandlersFinished);
    return continueAsNew<typeof vmWorkflow>({ spec: input.spec, ...(input.tuning ? { tuning: input.tuning } : {}), carried: { status: ctx.status, pollIntervalMs } });
  }
  if (end !== 'launch-cancelled') {
    const s = ctx.status;
    ctx.setStage(end === 'lost' ? 'lost' : 'tearing-down');
    if (s.location) {
      await runTeardown(ctx, { at: s.location, vmName: s.name, instanceIds: s.instanceIds, mode: 'full', pollIntervalMs });
    }
  }
  const final = end === 'lost' ? 'lost' : ctx.cancelRequested ? 'cancelled' : 'terminated';
  ctx.setStage(final, { endedAt: new Date().toISOString(), instanceIds: [] });
  if (ctx.temporalCancelled) throw new CancelledFailure('cancelled; everything this VM created was deleted');
  return ctx.status;
}
