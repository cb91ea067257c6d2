/**
 * accountWatcherWorkflow (ID `gpuprov-watch:<deployment>:<cloud>:<region>`): one per deployment,
 * cloud account and region. Each cycle takes one view (the cloud's inventory and the open
 * vmWorkflows there), tells Ready VMs whose instance is gone (`instanceLost`), and deletes
 * orphans (VM names its ledger records creating, no open workflow owns) after their grace; tagged
 * instances it has no record of are shown as unknown, never deleted unless the operator names
 * them. Decisions: `planCycle` in src/core/watcher.ts; the ledger lives in its pages
 * (`ledgerPageWorkflow`, src/core/ledger-pages.ts), outside this history. Continues as new to
 * bound its history, carrying first-seen times and recent sweeps.
 * State and steps live in `WatcherDriver` (watcher-driver.ts); this is the glue.
 */
import { allHandlersFinished, condition, continueAsNew, setHandler } from '@temporalio/workflow';
import { sweepNowUpdate, watcherNudgeSignal, watcherRecordSignal, watcherStateQuery, type SweepRequest } from '../core/watcher-api';
import type { WatcherInput } from '../core/watcher';
import { WatcherDriver } from './watcher-driver';

export async function accountWatcherWorkflow(input: WatcherInput): Promise<void> {
  const watcher = new WatcherDriver(input);
  setHandler(watcherNudgeSignal, (latest) => watcher.onNudge(latest));
  setHandler(watcherRecordSignal, (rec) => watcher.onRecord(rec));
  setHandler(watcherStateQuery, () => watcher.state);
  setHandler(sweepNowUpdate, (req?: SweepRequest) => watcher.sweepNow(req));

  for (;;) {
    if (!(await watcher.cycle())) continue;
    if (watcher.shouldContinueAsNew()) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof accountWatcherWorkflow>(watcher.nextInput());
    }
    await watcher.paceAfterFailures();
  }
}
