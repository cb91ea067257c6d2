/**
 * The failover search: plan → for each unblocked offer [prepare → create → boot → connect],
 * compensating every attempt that may have created something before moving on.
 * Decisions live in `search.ts`; this file is the glue that runs activities.
 */
import { ApplicationFailure, setHandler, sleep, workflowInfo, CancellationScope } from '@temporalio/workflow';
import type { PlanOutput } from '../activities';
import { isFatal, type BlockScope, type ErrorKind } from '../core/errors';
import { k3sWanted, openPortsFor } from '../core/k3s-access';
import { FAILURE_TYPES, SDK_FAILURE_KINDS } from '../core/failures';
import { locationOf, offerKey } from '../core/offers';
import { attemptIdempotencyKey } from '../core/release-scope';
import type { Capabilities, InstanceSpec, Offer } from '../core/provider';
import { cancelSignal, statusQuery, type AttemptRecord, type LaunchFailureDetails, type LaunchResult, type VmSpec } from '../core/api';
import { mutating, polling, reading } from './proxies';
import { VmContext } from './context';
import { failureInfo } from './failure-info';
import { bootPolling, sshPolling } from '../core/polling';
import {
  afterFailure,
  attemptsTable,
  decide,
  exhaustedKind,
  kindOfFailureType,
  newSearch,
  nextOffer,
  replan,
  type Phase,
  type SearchState,
} from '../core/search';
import { parallelOf } from '../core/hedge';
import { runHedged, type AttemptHost } from './hedged-launch';
import { runTeardown } from './teardown';
import { capacityNote } from './capacity-memory';
import { countFailover, countLaunch, recordReady, vmLog } from './telemetry';
import type { Tuning } from '../core/tuning';

export type LaunchOutcome =
  | { kind: 'ready'; result: LaunchResult; capabilities: Capabilities }
  | { kind: 'cancelled'; attempts: AttemptRecord[] }
  | { kind: 'failed'; details: LaunchFailureDetails; errorKind: string; message: string };

/** `createdAtMs`: workflow time of the create call (billing starts), when one was made. */
type AttemptEnd = { createdAtMs?: number } & (
  | { ok: true; result: Omit<LaunchResult, 'attempts'> }
  | { ok: false; phase: Phase; type: string; message: string; block?: BlockScope; cancelled: boolean; instanceIds: string[] }
);

const DEFAULT_CAPS: Capabilities = {
  bootScript: false,
  openPorts: false,
  k8s: false,
  sshUser: { kind: 'provider' },
  bootTimeoutMs: 15 * 60_000,
  pollIntervalMs: 5_000,
  typicalBootMs: 60_000,
};

export function capsFor(plan: PlanOutput, cloud: string): Capabilities {
  return plan.capabilities[cloud] ?? DEFAULT_CAPS;
}

export function defaultUser(caps: Capabilities): string {
  return caps.sshUser.kind === 'fixed' ? caps.sshUser.user : 'root';
}

async function runAttempt(ctx: AttemptHost, offer: Offer, index: number, caps: Capabilities): Promise<AttemptEnd> {
  const t = ctx.tuning;
  const info = workflowInfo();
  const spec = ctx.status.spec;
  const at = locationOf(offer);
  // The run id keeps a later VM of the same name (same workflow id) from reusing an old AWS
  // ClientToken / GCP requestId, which would hand back the old, terminated instance.
  const instSpec: InstanceSpec = {
    vmName: spec.name,
    owner: info.namespace,
    publicKeys: spec.publicKeys ?? [],
    idempotencyKey: attemptIdempotencyKey(info.workflowId, info.runId, index),
    openPorts: openPortsFor(caps, k3sWanted(spec.k8s, caps)),
    ...(spec.image !== undefined ? { image: spec.image } : {}),
    ...(spec.diskGb !== undefined ? { diskGb: spec.diskGb } : {}),
  };
  let phase: Phase = 'prepare';
  let instanceIds: string[] = [];
  let billedFromMs: number | undefined;
  try {
    ctx.setOffer(offer);
    ctx.setStage('creating', { instanceIds: [] });
    // k3s: the installer goes in as the boot script where the cloud runs one (read by an activity: workflows cannot read files).
    if (caps.bootScript && k3sWanted(spec.k8s, caps)) instSpec.bootScript = await reading(t, 'k3s installer as boot script').k3sBootScript({});
    const where = `${offer.instanceType} in ${offer.region}${offer.zone ? `/${offer.zone}` : ''}`;
    if (ctx.cancelRequested) return { ok: false, phase, type: SDK_FAILURE_KINDS.Cancelled, message: 'cancelled', cancelled: true, instanceIds };
    phase = 'create'; // a failed prepare step says so in its failure details
    const createdAtMs = (billedFromMs = Date.now());
    const created = await mutating(t, `prepare and create ${where}`, offer.cloud).prepareAndCreate(offer, instSpec);
    instanceIds = [created.instanceId];
    if (ctx.cancelRequested) return { ok: false, phase, type: SDK_FAILURE_KINDS.Cancelled, message: 'cancelled', cancelled: true, instanceIds };

    phase = 'boot';
    ctx.setStage('booting', { instanceIds });
    const running = await ctx.interruptibly(() =>
      polling(bootPolling(caps), `wait for ${created.instanceId} to run`, offer.cloud).awaitRunning({
        at,
        vmName: spec.name,
        instanceId: created.instanceId,
        createdAtMs,
      }),
    );
    instanceIds = [running.instanceId];

    phase = 'connect';
    ctx.setStage('connecting', { instanceIds, endpoint: running.endpoint });
    // The key the create installed (absent in older histories): a probe on a worker with another key fails at once.
    const workerKey = created.workerKeyFingerprint;
    const probe = await ctx.interruptibly(() =>
      polling(sshPolling(caps), `ssh probe ${running.endpoint.host}:${running.endpoint.port}`).probeSsh({
        endpoint: running.endpoint,
        defaultUser: defaultUser(caps),
        ...(workerKey ? { workerKey: { fingerprint: workerKey, vm: spec.name } } : {}),
      }),
    );
    const endpoint = running.endpoint.user ? running.endpoint : { ...running.endpoint, user: defaultUser(caps) };
    return {
      ok: true,
      createdAtMs,
      result: {
        offer,
        location: at,
        instanceId: running.instanceId,
        endpoint,
        hostKeyFingerprint: probe.fingerprint,
        hostKey: probe.hostKey,
        ...(workerKey ? { workerKeyFingerprint: workerKey } : {}),
        createdBy: instSpec.idempotencyKey,
      },
    };
  } catch (err) {
    const f = failureInfo(err);
    if (f.phase === 'prepare') phase = 'prepare';
    return {
      ok: false,
      phase,
      type: f.type,
      message: f.message,
      cancelled: f.cancelled,
      instanceIds,
      ...(f.block ? { block: f.block } : {}),
      ...(billedFromMs !== undefined ? { createdAtMs: billedFromMs } : {}),
    };
  }
}

/** Run the failover search in `ctx` until ready, cancelled, or failed. Never throws for cloud errors. */
export async function runLaunch(ctx: VmContext): Promise<LaunchOutcome> {
  const spec = ctx.status.spec;
  const t = ctx.tuning;
  const request = {
    vmName: spec.name,
    k8s: spec.k8s === 'on',
    ...(spec.gpu ? { gpu: spec.gpu } : {}),
    ...(spec.regions ? { regions: spec.regions } : {}),
    ...(spec.instanceTypes ? { instanceTypes: spec.instanceTypes } : {}),
    ...(spec.maxPricePerHour !== undefined ? { maxPricePerHour: spec.maxPricePerHour } : {}),
    ...(spec.image !== undefined ? { image: spec.image } : {}),
    ...(spec.diskGb !== undefined ? { diskGb: spec.diskGb } : {}),
  };
  const plan = async (): Promise<PlanOutput> => {
    ctx.setStage('planning');
    return ctx.interruptibly(() =>
      reading(t, `plan offers for ${spec.name}`).planOffers({ request, requireK8s: spec.k8s === 'on', ...(spec.clouds ? { clouds: spec.clouds } : {}) }),
    );
  };
  const fail = (reason: LaunchFailureDetails['reason'], errorKind: string, message: string, attempts: AttemptRecord[]): LaunchOutcome => ({
    kind: 'failed',
    details: { reason, attempts },
    errorKind,
    message,
  });

  let planned: PlanOutput;
  try {
    planned = await plan();
  } catch (err) {
    const f = failureInfo(err);
    if (f.cancelled) return { kind: 'cancelled', attempts: ctx.status.attempts };
    return fail('no-offers', kindOfFailureType(f.type), f.message, ctx.status.attempts);
  }
  const parallel = parallelOf(spec.parallel);
  if (parallel > 1) return runHedged(ctx, planned, { parallel, plan, capsFor, runAttempt });
  let search: SearchState = newSearch(planned.offers, ctx.status.attempts);

  for (;;) {
    if (ctx.cancelRequested) return { kind: 'cancelled', attempts: search.attempts };
    const next = nextOffer(search);
    if (!next) {
      if (!spec.retryUntilUp) {
        const kind = exhaustedKind(search.attempts);
        return fail('exhausted', kind, `every offer was tried and failed:\n${attemptsTable(search.attempts)}`, search.attempts);
      }
      ctx.setStage('waiting-retry');
      try {
        await ctx.interruptibly(() => sleep(t.retryUntilUpDelayMs, { summary: 'retry-until-up: wait before re-planning' }));
        planned = await plan();
      } catch (err) {
        const f = failureInfo(err);
        if (f.cancelled) return { kind: 'cancelled', attempts: search.attempts };
        continue; // a plan that fails now is retried after the next wait
      }
      search = replan(search, planned.offers);
      continue;
    }

    const index = search.attempts.length;
    const caps = capsFor(planned, next.offer.cloud);
    const startedAt = new Date().toISOString();
    const end = await runAttempt(ctx, next.offer, index, caps);
    const record: AttemptRecord = {
      index,
      offer: next.offer,
      outcome: 'ready',
      instanceIds: end.ok ? [end.result.instanceId] : end.instanceIds,
      compensated: false,
      startedAt,
      endedAt: new Date().toISOString(),
      ...(end.createdAtMs !== undefined ? { createdAt: new Date(end.createdAtMs).toISOString() } : {}),
    };
    if (end.ok) {
      const attempts = [...search.attempts, record];
      ctx.status.attempts = attempts;
      return { kind: 'ready', capabilities: caps, result: { ...end.result, attempts } };
    }

    const kind: ErrorKind = kindOfFailureType(end.type);
    const decision = end.cancelled
      ? { compensate: end.phase === 'prepare' ? ('cleanup' as const) : ('full' as const), next: 'abort' as const }
      : decide(kind, end.phase, end.block);
    Object.assign(record, {
      outcome: end.cancelled ? 'cancelled' : kind === 'Unavailable' ? 'unavailable' : 'failed',
      phase: end.phase,
      kind: end.cancelled ? SDK_FAILURE_KINDS.Cancelled : end.type === FAILURE_TYPES.BootFailed ? 'BootFailed' : kind,
      message: end.message,
      ...(decision.block ? { blocked: decision.block } : {}),
    });
    search = afterFailure(search, next.index, next.offer, kind, decision, record);
    ctx.status.attempts = search.attempts;
    if (!end.cancelled) {
      countFailover(record.kind ?? kind, next.offer.cloud);
      vmLog(ctx.status, 'info', `attempt failed in ${end.phase}: ${record.kind ?? kind}; compensating`, {
        attempt: index + 1,
        kind: record.kind ?? kind,
        phase: end.phase,
        offer: offerKey(next.offer),
        error: end.message,
      });
    }

    // Told while the attempt is compensated, by the release itself (never fails the release).
    const inRelease = !end.cancelled && kind === 'Capacity' ? capacityNote(next.offer) : undefined;
    ctx.setStage('compensating');
    await runTeardown(ctx, {
      at: locationOf(next.offer),
      vmName: spec.name,
      instanceIds: end.instanceIds,
      mode: decision.compensate === 'full' ? 'full' : 'cleanup',
      pollIntervalMs: caps.pollIntervalMs,
      ...(inRelease ? { capacity: inRelease } : {}),
      idempotencyKeys: [attemptIdempotencyKey(workflowInfo().workflowId, workflowInfo().runId, index)],
    });
    record.compensated = true;
    record.endedAt = new Date().toISOString();
    ctx.status.instanceIds = [];

    if (end.cancelled || ctx.cancelRequested) return { kind: 'cancelled', attempts: search.attempts };
    if (decision.next === 'abort' || isFatal(kind)) return fail('fatal', kind, `${kind}: ${end.message}`, search.attempts);
  }
}

export interface LaunchWorkflowInput {
  spec: VmSpec;
  tuning?: Partial<Tuning>;
}

/**
 * Standalone launch (for services that manage lifetime themselves): returns the launch result,
 * or fails with `LaunchFailed` and the attempts table in its details. `vmWorkflow` runs the same
 * search inline so the VM's status and stage stay in one history.
 */
export async function launchWorkflow(input: LaunchWorkflowInput): Promise<LaunchResult> {
  const ctx = new VmContext(input.spec, input.tuning);
  setHandler(statusQuery, () => ctx.status);
  setHandler(cancelSignal, () => ctx.requestCancel());
  CancellationScope.current().cancelRequested.catch(() => ctx.requestCancel(true));
  const outcome = await CancellationScope.nonCancellable(() => runLaunch(ctx));
  countLaunch(ctx.status, outcome.kind, outcome.kind === 'ready' ? outcome.result : undefined);
  if (outcome.kind === 'ready') {
    const { workerKeyFingerprint } = outcome.result;
    ctx.setStage('ready', {
      readyAt: new Date().toISOString(),
      endpoint: outcome.result.endpoint,
      instanceIds: [outcome.result.instanceId],
      ...(workerKeyFingerprint ? { workerKeyFingerprint } : {}),
    });
    recordReady(ctx.status);
    return outcome.result;
  }
  if (outcome.kind === 'cancelled') {
    ctx.setStage('cancelled', { endedAt: new Date().toISOString() });
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.LaunchCancelled,
      message: 'launch cancelled; every attempt was compensated',
      nonRetryable: true,
      details: [{ reason: 'cancelled', attempts: outcome.attempts } satisfies LaunchFailureDetails],
    });
  }
  ctx.setStage('failed', { error: { kind: outcome.errorKind, message: outcome.message } });
  throw ApplicationFailure.create({ type: FAILURE_TYPES.LaunchFailed, message: outcome.message, nonRetryable: true, details: [outcome.details] });
}
