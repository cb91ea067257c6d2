/**
 * P11 (issue 30): a spot preemption with notice under `--recover`, on a fake cloud that sells
 * spot, scaled down ×{@link P11_SCALE} with the same ratios as a real one: a 120 s notice, a 60 s
 * boot (30 s and 15 s here). Per run: a Ready spot VM, its instance preempted at the cloud
 * (`preempt(id, { noticeMs })`), and nothing else: the account watcher sees the notice at its
 * `spot` cadence (4 s, not scaled) and tells the VM. Measured: notice → the replacement's create,
 * notice → replacement Ready, how long before the deadline that was, and the most billed instances
 * of the name at any 20 ms sample (must be ≤ 2).
 */
import { startAttributes } from '../src/core/search-attributes';
import type { Client } from '@temporalio/client';
import { statusQuery, teardownSignal, vmWorkflowId, type VmStatus } from '../src/core/api';
import type { vmWorkflow } from '../src/workflows';
import type { FakeProvider } from '../test/harness/fake-provider';
import { sleep } from './stats';

export const P11_SCALE = 0.25;
export const P11_NOTICE_MS = 120_000 * P11_SCALE;
export const P11_BOOT_MS = 60_000 * P11_SCALE;

export interface PreemptRun {
  /** Notice → the replacement's create at the cloud (the watcher's detection and the relaunch's plan). */
  noticeToCreateMs: number;
  /** Notice → the replacement Ready (workflow time of `readyAt`). */
  noticeToReadyMs: number;
  /** Deadline − the replacement's Ready: the head start left (negative: Ready after the deadline). */
  beforeDeadlineMs: number;
  /** Notice → the old instance deleted. */
  noticeToOldGoneMs: number;
  maxBilled: number;
}

async function waitStatus(h: { query: (q: typeof statusQuery) => Promise<VmStatus> }, pred: (s: VmStatus) => boolean): Promise<VmStatus> {
  for (let tries = 0; tries < 3_000; tries++) {
    const s = await h.query(statusQuery).catch(() => undefined);
    if (s && pred(s)) return s;
    await sleep(20);
  }
  throw new Error('P11: timed out');
}

async function one(client: Client, taskQueue: string, fake: FakeProvider, name: string): Promise<PreemptRun> {
  fake.setBootMs(P11_BOOT_MS);
  const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
    taskQueue,
    workflowId: `${vmWorkflowId(name)}-${Date.now()}`,
    typedSearchAttributes: startAttributes(name),
    args: [{ spec: { name, clouds: [fake.name], k8s: 'off', spot: 'only', recover: true }, tuning: { healthIntervalMs: 10 * 60_000 } }],
  });
  const ready = await waitStatus(h, (s) => s.stage === 'ready');
  const id = ready.instanceIds[0]!;
  let maxBilled = 0;
  const sampler = setInterval(() => (maxBilled = Math.max(maxBilled, fake.billed(name).length)), 20);
  // The watcher's spot cadence starts with its next look after the Ready record; give it that look.
  await sleep(5_000);
  const notice = fake.preempt(id, { noticeMs: P11_NOTICE_MS })!;
  const again = await waitStatus(h, (s) => s.stage === 'ready' && s.retiring?.goneAt !== undefined);
  clearInterval(sampler);
  await h.signal(teardownSignal);
  await h.result();
  const noticeMs = Date.parse(notice.noticeAt);
  const replacement = fake.callsOf('create').find((c) => c.vmName === name && c.at >= noticeMs);
  return {
    noticeToCreateMs: (replacement?.at ?? Number.NaN) - noticeMs,
    noticeToReadyMs: Date.parse(again.readyAt!) - noticeMs,
    beforeDeadlineMs: Date.parse(notice.deadline!) - Date.parse(again.readyAt!),
    noticeToOldGoneMs: Date.parse(again.retiring!.goneAt!) - noticeMs,
    maxBilled,
  };
}

/** `n` preemptions one after another on `fake`. */
export async function preemptRuns(client: Client, taskQueue: string, fake: FakeProvider, n: number): Promise<PreemptRun[]> {
  const out: PreemptRun[] = [];
  for (let i = 0; i < n; i++) out.push(await one(client, taskQueue, fake, `p11-${i}`));
  return out;
}
