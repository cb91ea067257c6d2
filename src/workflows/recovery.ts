/**
 * `--recover` glue of vmWorkflow: take the row of src/core/recovery.ts's table. A `replace` is
 * decided before anything is torn down (the old instance keeps running, ./retire.ts); a
 * `relaunch` once the lost VM's remains are torn down. Relaunching is the caller's
 * continue-as-new (a fresh plan, the same workflow ID and name); this file decides, records and logs.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { RecoveryRecord, RetiringInstance } from '../core/api';
import type { LossCause } from '../core/loss';
import { decideAfterLoss, RECOVERY_MEMO, type LossDecision } from '../core/recovery';
import { spendSoFar } from '../core/spend';
import type { VmContext } from './context';
import { countPreemption, vmLog } from './telemetry';

function decide(ctx: VmContext, cause: LossCause, stopAsked: boolean, lostAtMs: number): LossDecision {
  const s = ctx.status;
  const t = ctx.tuning;
  return decideAfterLoss({
    spec: s.spec,
    recovered: s.recovered,
    fleetSlot: workflowInfo().parent !== undefined,
    stopAsked,
    spentUsd: spendSoFar(s, Date.now()).totalUsd,
    maxRecoveries: t.maxRecoveries,
    spotAutoPreemptions: t.spotAutoPreemptions,
    spotAutoWindowMs: t.spotAutoWindowMs,
    lostAt: new Date(lostAtMs).toISOString(),
    cause,
  });
}

/**
 * Right after a loss, before any teardown: the replacement's record and the old instance to
 * retire when the table says `replace` (a preemption with its deadline ahead), else undefined.
 */
export function replacementAfterLoss(
  ctx: VmContext,
  cause: LossCause,
  stopAsked: boolean,
  lostAtMs: number,
): { recovered: RecoveryRecord; retiring: RetiringInstance } | undefined {
  const s = ctx.status;
  if (cause.kind !== 'preempted' || !s.location || !s.offer || !s.createdBy) return undefined;
  const d = decide(ctx, cause, stopAsked, lostAtMs);
  if (d.kind !== 'replace') return undefined;
  countPreemption(s, true, 'replace');
  vmLog(s, 'warn', `preempted; replacing under the same name before ${d.deadline} (recovery ${d.record.count})`, {
    recoveries: d.record.count,
    reason: d.record.lastReason,
    ...(d.record.onDemand ? { onDemand: true } : {}),
  });
  const retiring: RetiringInstance = {
    location: s.location,
    instanceIds: s.instanceIds,
    createdBy: s.createdBy,
    offer: s.offer,
    deadline: d.deadline,
    since: d.record.lastLostAt,
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
    ...(s.hostKey ? { hostKey: s.hostKey } : {}),
  };
  return { recovered: d.record, retiring };
}

/**
 * After a loss and its teardown: the record to relaunch with, or undefined (the VM stays `lost`;
 * when recovery was asked, the status says why it stopped). `cause`: the account watcher's, or the
 * backstop health check's; `lostAtMs`: when the Ready wait saw the loss.
 */
export function afterLoss(ctx: VmContext, cause: LossCause, stopAsked: boolean, lostAtMs: number): RecoveryRecord | undefined {
  const s = ctx.status;
  const d = decide(ctx, cause, stopAsked, lostAtMs);
  if (cause.kind === 'preempted') countPreemption(s, cause.deadline !== undefined, d.kind === 'stay' ? 'stay' : 'relaunch');
  if (d.kind !== 'stay') {
    vmLog(s, 'warn', `lost; relaunching under the same name (recovery ${d.record.count})`, { recoveries: d.record.count, reason: d.record.lastReason });
    return d.record;
  }
  if (d.record) {
    ctx.setStage(s.stage, { recovered: d.record });
    vmLog(s, 'warn', `lost; not relaunched: ${d.record.gaveUp ?? ''}`, { recoveries: d.record.count });
  }
  return undefined;
}

/** The memo a recovered VM's runs carry, so `provision list` shows the count without a query. */
export function recoveryMemo(r: RecoveryRecord | undefined): { memo: Record<string, unknown> } | undefined {
  return r ? { memo: { [RECOVERY_MEMO]: r } } : undefined;
}
