/**
 * Teardown: delete → await gone → cleanup (one `releaseAt` activity). A teardown that runs out of budget does not end
 * quietly: the VM shows stage `leaked`, and it retries on a capped backoff, or at once on the
 * `teardown` signal, until nothing is billed.
 */
import { CancellationScope, condition, setHandler } from '@temporalio/workflow';
import type { Location } from '../core/provider';
import type { ReleaseInput } from '../activities/attempt';
import { statusQuery, teardownSignal, type Stage, type VmStatus } from '../core/api';
import { releasing } from './proxies';
import { VmContext } from './context';
import { leakDelayMs, type Tuning } from '../core/tuning';
import { failureMessage } from './failure-info';
import { vmLog } from './telemetry';

export interface TeardownTarget {
  at: Location;
  vmName: string;
  /** Known ids; the delete also finds instances by identity. */
  instanceIds: string[];
  /** `cleanup`: only side resources (nothing can have been created). */
  mode: 'full' | 'cleanup';
  pollIntervalMs: number;
  /** The attempt answered Capacity: the release tells the capacity memory too (`ReleaseInput.capacity`). */
  capacity?: ReleaseInput['capacity'];
  /** The creates this teardown undoes: another create's instance of the name is spared (`ReleaseInput.idempotencyKeys`). */
  idempotencyKeys?: string[];
  /** Ids never deleted here (`ReleaseInput.keepIds`: a preempted instance retiring beside its replacement). */
  keepIds?: string[];
  /** Only `instanceIds` are deleted (`ReleaseInput.exact`: the retiring instance's own deletion). */
  exact?: boolean;
}

async function onePass(t: Tuning, target: TeardownTarget): Promise<void> {
  const where = `${target.at.cloud}/${target.at.region}${target.at.zone ? `/${target.at.zone}` : ''}`;
  const what = target.mode === 'full' ? `delete ${target.vmName}, wait until gone, clean up` : `clean up ${target.vmName} side resources`;
  await releasing(t, `${what} in ${where}`, target.at.cloud).releaseAt({ ...target, deadlineAtMs: Date.now() + t.goneDeadlineMs });
}

/**
 * Tear down until done. Never cancellable: a cancel never abandons a teardown. While it cannot
 * finish, the VM is in stage `leaked` (visible to `list` and the Web UI); afterwards the stage it
 * had before is restored and the caller moves on.
 */
export async function runTeardown(ctx: VmContext, target: TeardownTarget): Promise<void> {
  let tries = 0;
  let before: Stage | undefined;
  const since = new Date().toISOString();
  for (;;) {
    tries += 1;
    try {
      await CancellationScope.nonCancellable(() => onePass(ctx.tuning, target));
      if (before !== undefined) {
        delete ctx.status.leak;
        ctx.setStage(before);
      }
      return;
    } catch (err) {
      before ??= ctx.status.stage;
      const delay = leakDelayMs(ctx.tuning, tries);
      if (tries > 1) vmLog(ctx.status, 'warn', 'teardown failed again; still leaked', { tries, error: failureMessage(err) });
      const signalsAtStart = ctx.teardownRequests;
      ctx.setStage('leaked', {
        leak: {
          location: target.at,
          instanceIds: target.instanceIds,
          since,
          tries,
          lastError: failureMessage(err),
          nextRetryAt: new Date(Date.now() + delay).toISOString(),
        },
      });
      await CancellationScope.nonCancellable(() => condition(() => ctx.teardownRequests > signalsAtStart, delay));
    }
  }
}

export interface TeardownWorkflowInput {
  target: TeardownTarget;
  tuning?: Partial<Tuning>;
}

/** Standalone teardown (for other services and operators): same guarantees, its own status query. */
export async function teardownWorkflow(input: TeardownWorkflowInput): Promise<VmStatus> {
  const ctx = new VmContext({ name: input.target.vmName }, input.tuning);
  setHandler(statusQuery, () => ctx.status);
  setHandler(teardownSignal, () => {
    ctx.teardownRequests += 1;
  });
  ctx.setStage('tearing-down');
  await runTeardown(ctx, input.target);
  ctx.setStage('terminated', { endedAt: new Date().toISOString(), instanceIds: [] });
  return ctx.status;
}
