/**
 * One launch attempt, for the serial and the hedged search alike: prepare + create → boot →
 * connect (`runAttempt`), the bookkeeping of a failed one (`failedAttempt`: judged by
 * src/core/attempt.ts, counted, logged) and its compensation (`compensate`). Plus the
 * retry-until-up wait both searches take when a round is exhausted.
 */
import { sleep, workflowInfo } from '@temporalio/workflow';
import type { PlanOutput } from '../activities';
import type { CreateResult } from '../activities/create-or-adopt';
import type { LaunchResult, Stage, VmStatus } from '../core/api';
import { judgeFailure, type AttemptAt, type AttemptEnd, type FailedEnd, type JudgedAttempt } from '../core/attempt';
import { SDK_FAILURE_KINDS } from '../core/failures';
import { k3sWanted, openPortsFor } from '../core/k3s-access';
import { locationOf, offerKey } from '../core/offers';
import { bootPolling, sshPolling } from '../core/polling';
import type { Capabilities, InstanceSpec, Offer } from '../core/provider';
import { attemptIdempotencyKey } from '../core/release-scope';
import type { Decision, Phase } from '../core/search';
import type { Tuning } from '../core/tuning';
import { capacityNote } from './capacity-memory';
import type { VmContext } from './context';
import { failureInfo } from './failure-info';
import { mutating, polling, reading } from './proxies';
import { runTeardown } from './teardown';
import { countFailover, vmLog } from './telemetry';

/** What one attempt may touch of the VM: its context, or (hedged) a per-attempt view of it. */
export interface AttemptHost {
  readonly tuning: Tuning;
  readonly status: VmStatus;
  readonly cancelRequested: boolean;
  interruptibly<T>(fn: () => Promise<T>): Promise<T>;
  setOffer(offer: Offer | undefined): void;
  setStage(stage: Stage, patch?: Partial<VmStatus>): void;
}

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

/** Where an attempt is: the phase a failure is charged to, the instances it holds, when billing began. */
interface Progress {
  phase: Phase;
  instanceIds: string[];
  billedFromMs?: number;
}

/** The instance spec of attempt `index`. */
function instanceSpecOf(host: AttemptHost, index: number, caps: Capabilities): InstanceSpec {
  const info = workflowInfo();
  const spec = host.status.spec;
  // The run id keeps a later VM of the same name (same workflow id) from reusing an old AWS
  // ClientToken / GCP requestId, which would hand back the old, terminated instance.
  return {
    vmName: spec.name,
    owner: info.namespace,
    publicKeys: spec.publicKeys ?? [],
    idempotencyKey: attemptIdempotencyKey(info.workflowId, info.runId, index),
    openPorts: openPortsFor(caps, k3sWanted(spec.k8s, caps)),
    ...(spec.image !== undefined ? { image: spec.image } : {}),
    ...(spec.diskGb !== undefined ? { diskGb: spec.diskGb } : {}),
    ...(host.status.retiring && !host.status.retiring.goneAt ? { besides: host.status.retiring.instanceIds } : {}),
  };
}

/** Run one attempt at `offer`. Never throws: a failure, or a cancel, is an end too. */
export async function runAttempt(host: AttemptHost, offer: Offer, index: number, caps: Capabilities): Promise<AttemptEnd> {
  const spec = host.status.spec;
  const instSpec = instanceSpecOf(host, index, caps);
  const p: Progress = { phase: 'prepare', instanceIds: [] };
  const cancelled = (): AttemptEnd => ({
    ok: false,
    phase: p.phase,
    type: SDK_FAILURE_KINDS.Cancelled,
    message: 'cancelled',
    cancelled: true,
    instanceIds: p.instanceIds,
  });
  try {
    host.setOffer(offer);
    host.setStage('creating', { instanceIds: [] });
    // k3s: the installer goes in as the boot script where the cloud runs one (read by an activity: workflows cannot read files).
    if (caps.bootScript && k3sWanted(spec.k8s, caps)) instSpec.bootScript = await reading(host.tuning, 'k3s installer as boot script').k3sBootScript({});
    const where = `${offer.instanceType} in ${offer.region}${offer.zone ? `/${offer.zone}` : ''}`;
    if (host.cancelRequested) return cancelled();
    p.phase = 'create'; // a failed prepare step says so in its failure details
    const createdAtMs = (p.billedFromMs = Date.now());
    const created = await mutating(host.tuning, `prepare and create ${where}`, offer.cloud).prepareAndCreate(offer, instSpec);
    p.instanceIds = [created.instanceId];
    if (host.cancelRequested) return cancelled();
    const result = await bootAndConnect(host, offer, caps, p, created, createdAtMs);
    return { ok: true, createdAtMs, result: { ...result, createdBy: instSpec.idempotencyKey } };
  } catch (err) {
    const f = failureInfo(err);
    return {
      ok: false,
      phase: f.phase === 'prepare' ? 'prepare' : p.phase,
      type: f.type,
      message: f.message,
      cancelled: f.cancelled,
      instanceIds: p.instanceIds,
      ...(f.block ? { block: f.block } : {}),
      ...(f.released ? { released: f.released } : {}),
      ...(p.billedFromMs !== undefined ? { createdAtMs: p.billedFromMs } : {}),
    };
  }
}

/** Boot (wait until running) and connect (the SSH probe) the created instance. */
async function bootAndConnect(
  host: AttemptHost,
  offer: Offer,
  caps: Capabilities,
  p: Progress,
  created: CreateResult,
  createdAtMs: number,
): Promise<Omit<LaunchResult, 'attempts' | 'createdBy'>> {
  const vmName = host.status.spec.name;
  p.phase = 'boot';
  host.setStage('booting', { instanceIds: p.instanceIds });
  const running = await host.interruptibly(() =>
    polling(bootPolling(caps), `wait for ${created.instanceId} to run`, offer.cloud).awaitRunning({
      at: locationOf(offer),
      vmName,
      instanceId: created.instanceId,
      createdAtMs,
    }),
  );
  p.instanceIds = [running.instanceId];

  p.phase = 'connect';
  host.setStage('connecting', { instanceIds: p.instanceIds, endpoint: running.endpoint });
  // The key the create installed: a probe on a worker with another key fails at once.
  const workerKey = created.workerKeyFingerprint;
  const probe = await host.interruptibly(() =>
    polling(sshPolling(caps), `ssh probe ${running.endpoint.host}:${running.endpoint.port}`).probeSsh({
      endpoint: running.endpoint,
      defaultUser: defaultUser(caps),
      ...(workerKey ? { workerKey: { fingerprint: workerKey, vm: vmName } } : {}),
    }),
  );
  const endpoint = running.endpoint.user ? running.endpoint : { ...running.endpoint, user: defaultUser(caps) };
  return {
    offer,
    location: locationOf(offer),
    instanceId: running.instanceId,
    endpoint,
    hostKeyFingerprint: probe.fingerprint,
    hostKey: probe.hostKey,
    ...(workerKey ? { workerKeyFingerprint: workerKey } : {}),
  };
}

/** A failed or cancelled attempt: judged (src/core/attempt.ts); a failure (not a cancel) is counted and logged. */
export function failedAttempt(host: Pick<AttemptHost, 'status'>, at: AttemptAt, end: FailedEnd): JudgedAttempt {
  const judged = judgeFailure(at, end);
  if (!end.cancelled) {
    const kind = judged.record.kind ?? judged.kind;
    countFailover(kind, at.offer.cloud);
    vmLog(host.status, 'info', `attempt failed in ${end.phase}: ${kind}; compensating`, {
      attempt: at.index + 1,
      kind,
      phase: end.phase,
      offer: offerKey(at.offer),
      error: end.message,
    });
  }
  return judged;
}

/**
 * Release what the attempt of `record` may have made (never cancellable; runTeardown) and mark the
 * record compensated. `capacity`: the attempt answered Capacity, and the release tells the
 * deployment's capacity memory (never failing the release). `released`: the create activity
 * released it already (src/core/attempt.ts `alreadyReleased`): only the record is marked.
 */
export async function compensate(
  ctx: VmContext,
  record: JudgedAttempt['record'],
  decision: Decision,
  caps: Capabilities,
  o: { capacity: boolean; released: boolean },
): Promise<void> {
  if (o.released) record.releasedByCreate = true;
  else await release(ctx, record, decision, caps, o.capacity);
  record.compensated = true;
  record.endedAt = new Date().toISOString();
}

async function release(ctx: VmContext, record: JudgedAttempt['record'], decision: Decision, caps: Capabilities, capacity: boolean): Promise<void> {
  const note = capacity ? capacityNote(record.offer) : undefined;
  await runTeardown(ctx, {
    at: locationOf(record.offer),
    vmName: ctx.status.spec.name,
    instanceIds: record.instanceIds,
    mode: decision.compensate === 'full' ? 'full' : 'cleanup',
    pollIntervalMs: caps.pollIntervalMs,
    ...(note ? { capacity: note } : {}),
    idempotencyKeys: [attemptIdempotencyKey(workflowInfo().workflowId, workflowInfo().runId, record.index)],
    ...(retiringIds(ctx) ? { keepIds: retiringIds(ctx) } : {}),
  });
}

/** The ids of a preempted instance still retiring beside this run's launch: a failed attempt's release keeps them. */
function retiringIds(ctx: VmContext): string[] | undefined {
  const r = ctx.status.retiring;
  return r && !r.goneAt && r.instanceIds.length > 0 ? r.instanceIds : undefined;
}

/**
 * retry-until-up, after an exhausted round: wait, then plan again. The new plan; `cancelled`; or
 * undefined when the plan failed (it is retried after the next wait).
 */
export async function waitAndReplan(ctx: VmContext, plan: () => Promise<PlanOutput>): Promise<PlanOutput | 'cancelled' | undefined> {
  ctx.setStage('waiting-retry');
  try {
    await ctx.interruptibly(() => sleep(ctx.tuning.retryUntilUpDelayMs, { summary: 'retry-until-up: wait before re-planning' }));
    return await plan();
  } catch (err) {
    return failureInfo(err).cancelled ? 'cancelled' : undefined;
  }
}
