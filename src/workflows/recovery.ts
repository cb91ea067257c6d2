/**
 * `--recover` glue of vmWorkflow: once a lost VM's remains are torn down, take the row of
 * src/core/recovery.ts's table. Relaunching is the caller's continue-as-new (a fresh plan, the same
 * workflow ID and name); this file only decides, records and logs. Issues no command, so VMs
 * without the flag (and every saved history) replay unchanged.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { RecoveryRecord } from '../core/api';
import type { LossCause } from '../core/loss';
import { decideAfterLoss, RECOVERY_MEMO } from '../core/recovery';
import { spendSoFar } from '../core/spend';
import type { VmContext } from './context';
import { vmLog } from './telemetry';

/**
 * After a loss: the record to relaunch with, or undefined (the VM stays `lost`; when recovery was
 * asked, the status says why it stopped). `cause`: the account watcher's, or the backstop health
 * check's; `lostAtMs`: when the Ready wait saw the loss.
 */
export function afterLoss(ctx: VmContext, cause: LossCause, stopAsked: boolean, lostAtMs: number): RecoveryRecord | undefined {
  const s = ctx.status;
  const d = decideAfterLoss({
    spec: s.spec,
    recovered: s.recovered,
    fleetSlot: workflowInfo().parent !== undefined,
    stopAsked,
    spentUsd: spendSoFar(s, Date.now()).totalUsd,
    maxRecoveries: ctx.tuning.maxRecoveries,
    lostAt: new Date(lostAtMs).toISOString(),
    cause,
  });
  if (d.kind === 'relaunch') {
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
