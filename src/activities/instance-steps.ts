/**
 * The attempt's waits after the create: until the instance runs (`awaitRunning`, boot-aware
 * delays), until SSH answers with the worker's key (`probeSsh`), and the health check's
 * `observeVm`. Waiting is by retry: a not-ready look throws a retryable `NotReady`.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, type FailureDetails } from '../core/failures';
import { bootPollDelayMs } from '../core/polling';
import type { Location, Observed, SshEndpoint } from '../core/provider';
import { ProbeCommandError, requireWorkerKey, SshError, sshFailure, sshProber, type ProbeResult, type SshProber, type WorkerKeyRef } from '../ssh';
import { activityLog } from './activity-log';
import { providerOf } from './attempt';
import type { ActivityDeps } from './deps';
import { bootFailed, notReady, translated } from './failures';
import { lookAgain } from './look-again';

export interface AwaitRunningInput {
  at: Location;
  vmName: string;
  instanceId: string;
  /** Epoch ms of the create; a vanished instance is only "gone" after a grace period (eventual consistency). */
  createdAtMs: number;
}

export interface RunningInstance {
  instanceId: string;
  endpoint: SshEndpoint;
}

export interface ProbeInput {
  endpoint: SshEndpoint;
  /** Login user when the endpoint does not name one. */
  defaultUser: string;
  /** The key the VM was created with: a worker with another key fails at once (WorkerKeyMismatch). */
  workerKey?: WorkerKeyRef;
}

/** Delay between SSH probe tries within one attempt (sshd usually answers moments after Running). */
export const SSH_LOOK_DELAY_MS = 300;

/** Instance not seen for this long after create = vanished (covers list-after-create lag). */
export const VANISH_GRACE_MS = 30_000;

type StepDeps = ActivityDeps & { prober: SshProber; now: () => number };

/** One boot look: the running instance, or NotReady (boot-aware `nextRetryDelay`) / BootFailed. */
async function lookRunning(deps: StepDeps, input: AwaitRunningInput): Promise<RunningInstance> {
  const p = providerOf(deps.registry, input.at.cloud);
  const seen = await translated(() => p.observe(input.at, input.vmName));
  // Boot-aware polling: sparse before the cloud's typical boot time, dense around it (P3 in BENCHMARKS.md).
  const next = bootPollDelayMs(p.capabilities(), deps.now() - input.createdAtMs);
  const inst = seen.find((o) => o.id === input.instanceId) ?? seen.find((o) => o.status === 'Running' || o.status === 'Pending');
  if (!inst) {
    if (deps.now() - input.createdAtMs > VANISH_GRACE_MS) throw bootFailed(`instance ${input.instanceId} vanished while booting`);
    throw notReady(`instance ${input.instanceId} not listed yet`, next);
  }
  if (inst.status === 'Failed') throw bootFailed(`instance ${inst.id} failed while booting${inst.reason ? `: ${inst.reason}` : ''}`);
  if (inst.status === 'Terminating' || inst.status === 'Stopped' || inst.status === 'Stopping') {
    throw bootFailed(`instance ${inst.id} is ${inst.status} while booting${inst.reason ? `: ${inst.reason}` : ''}`);
  }
  if (inst.status !== 'Running' || !inst.endpoint) throw notReady(`instance ${inst.id} is ${inst.status}${inst.endpoint ? '' : ', no SSH endpoint yet'}`, next);
  return { instanceId: inst.id, endpoint: inst.endpoint };
}

/** One SSH probe: SshNotReady / SshAuthFailed (retryable) until it works; a failing command is final. */
async function probeOnce(deps: StepDeps, input: ProbeInput): Promise<ProbeResult> {
  const target = { host: input.endpoint.host, port: input.endpoint.port, user: input.endpoint.user ?? input.defaultUser };
  try {
    return await deps.prober(target, deps.ssh, 10_000);
  } catch (err) {
    if (err instanceof SshError) throw sshFailure(err);
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof ProbeCommandError)
      throw ApplicationFailure.create({
        type: FAILURE_TYPES.CommandFailed,
        message,
        nonRetryable: true,
        details: [{ kind: 'Failed' } satisfies FailureDetails],
      });
    // A timed-out `true`, or a test prober's plain error: not reachable yet.
    throw sshFailure(new SshError('unreachable', message));
  }
}

export function createInstanceStepActivities(deps: ActivityDeps) {
  const d: StepDeps = { ...deps, prober: deps.prober ?? sshProber, now: deps.now ?? Date.now };
  const inline = deps.inlineWindowMs === undefined ? {} : { windowMs: deps.inlineWindowMs };
  return {
    /** NotReady (retryable) until the instance is Running with an SSH endpoint. */
    async awaitRunning(input: AwaitRunningInput): Promise<RunningInstance> {
      const running = await lookAgain(() => lookRunning(d, input), inline);
      activityLog('info', 'instance running', { instanceId: running.instanceId, host: running.endpoint.host, port: running.endpoint.port });
      return running;
    },

    /** Connect with the worker's key and run `true`; SshNotReady (retryable) until it works. */
    async probeSsh(input: ProbeInput): Promise<ProbeResult> {
      requireWorkerKey(deps.ssh, input.workerKey);
      const probed = await lookAgain(() => probeOnce(d, input), { ...inline, defaultDelayMs: SSH_LOOK_DELAY_MS });
      activityLog('info', 'ssh answers', { host: input.endpoint.host, port: input.endpoint.port, hostKeyFingerprint: probed.fingerprint });
      return probed;
    },

    async observeVm(at: Location, vmName: string): Promise<Observed[]> {
      return translated(() => providerOf(deps.registry, at.cloud).observe(at, vmName));
    },
  };
}
