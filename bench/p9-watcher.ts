/**
 * P9 (issue 29): the account watcher at fleet scale. `npx tsx bench/p9-watcher.ts [--sizes 500,1500,5000] [--cycles 20]`:
 * for each size N, one region of a fake cloud holds N running instances of N Ready VMs, the
 * ledger records their creates (as the creates do, 50 names a signal), and the real
 * accountWatcherWorkflow runs on a dev server with its real activities. Visibility is the one
 * stand-in: the watcher's Temporal client lists N synthetic open vmWorkflows (N real ones would
 * measure the dev server, not the watcher). The view changes once per cycle (one VM's stage
 * flips), then 5 instances are killed behind the product's back. Printed per size: the largest
 * history event and payload, the bytes of history per cycle, the workflow tasks' run times
 * (started → completed) and the loss count the watcher reported.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SA } from '../src/core/search-attributes';
import { watcherRecordSignal, watcherStateQuery, type WatcherState } from '../src/core/watcher-api';
import type { OwnerVm } from '../src/core/watcher';
import type { accountWatcherWorkflow } from '../src/workflows';
import { defaultFakeOffers } from '../test/harness/fake-provider';
import { eventsOf, kindOf, timeOf, type HistoryEvent } from './history';
import { startLab } from './lab';
import { percentile, round, sleep } from './stats';

const arg = (k: string): string | undefined => {
  const i = process.argv.indexOf(k);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SIZES = (arg('--sizes') ?? '500,1500,5000').split(',').map(Number);
const CYCLES = Number(arg('--cycles') ?? 20);
const KILLS = 5;
const log = (s: string): void => void process.stderr.write(`[p9] ${s}\n`);
const offer = defaultFakeOffers()[0]!;

/** The synthetic visibility: N open Ready vmWorkflows (stages changeable), answering both of the watcher's queries. */
function visibility(owners: OwnerVm[]): () => Client {
  const get = (o: OwnerVm) => (k: { name: string }) => (k.name === SA.vmName.name ? o.vmName : k.name === SA.stage.name ? o.stage : undefined);
  const list = async function* ({ query }: { query: string }) {
    const byName = !query.includes('TaskQueue');
    for (const o of owners) if (!byName || query.includes(`'${o.vmName}'`)) yield { workflowId: o.workflowId, typedSearchAttributes: { get: get(o) } };
  };
  return () => ({ workflow: { list } }) as unknown as Client;
}

function eventBytes(e: HistoryEvent): number {
  return temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
}

/** Workflow task run times: WorkflowTaskStarted → its WorkflowTaskCompleted, ms. */
function taskRunMs(events: HistoryEvent[]): number[] {
  const out: number[] = [];
  let started: number | undefined;
  for (const e of events) {
    const k = kindOf(e);
    if (k === 'workflowTaskStarted') started = timeOf(e);
    else if (k === 'workflowTaskCompleted' && started !== undefined) out.push(timeOf(e) - started);
  }
  return out;
}

async function oneSize(n: number) {
  const owners: OwnerVm[] = Array.from({ length: n }, (_, i) => ({ workflowId: `vm-p9-${i}`, vmName: `p9-${i}`, stage: 'ready' }));
  // A continue-as-new after ~15 cycles: the next run's start event carries the ledger (what still grows with the fleet).
  const tuning = {
    fastIntervalMs: 300,
    readyIntervalMs: 300,
    slowIntervalMs: 300,
    quietWindowMs: 3_000,
    heartbeatTimeoutMs: 10_000,
    continueAsNewAfterEvents: 150,
  };
  const lab = await startLab({ fakes: [{ name: 'fake' }], scheduleDelay: () => undefined, watcher: tuning, watcherClient: visibility(owners), log });
  try {
    const fake = lab.fake('fake');
    fake.setBootMs(0);
    for (const o of owners)
      await fake.create(offer, {}, { vmName: o.vmName, owner: 'default', publicKeys: [], idempotencyKey: `k-${o.vmName}`, openPorts: [] });
    const deployment = `p9-${n}-${randomUUID().slice(0, 6)}`;
    const h = await lab.client.workflow.start<typeof accountWatcherWorkflow>('accountWatcherWorkflow', {
      taskQueue: lab.taskQueue,
      workflowId: `gpuprov-watch:${deployment}:fake:${offer.region}`,
      args: [{ deployment, cloud: 'fake', region: offer.region, tuning }],
    });
    for (let i = 0; i < n; i += 50) await h.signal(watcherRecordSignal, { vmNames: owners.slice(i, i + 50).map((o) => o.vmName) });
    const state = (): Promise<WatcherState> => h.query(watcherStateQuery);
    const cyclesAt = async (c: number): Promise<void> => {
      for (let tries = 0; tries < 600 && (await state()).cycles < c; tries++) await sleep(100);
    };
    await cyclesAt(1);
    const started = (await state()).cycles;
    for (let c = 1; c <= CYCLES; c++) {
      const o = owners[c % n]!;
      o.stage = o.stage === 'ready' ? 'k8s-failed' : 'ready';
      await cyclesAt(started + c);
    }
    const before = (await state()).cycles;
    const killed = fake.live().slice(0, KILLS);
    for (const k of killed) fake.vanish(k.id);
    await cyclesAt(before + 1);
    const s = await state();
    // A whole view per cycle (before the digest) makes pages past the client's 4 MB default.
    const big = await Connection.connect({
      address: (lab.client.connection as Connection).options.address,
      channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
    });
    const reader = new Client({ connection: big, namespace: 'default' });
    const events = await eventsOf(reader.workflow.getHandle(h.workflowId, h.firstExecutionRunId));
    const latest = await eventsOf(reader.workflow.getHandle(h.workflowId));
    await big.close();
    await h.terminate('bench over');
    const sizes = events.map(eventBytes);
    const largest = Math.max(...sizes);
    const largestKind = kindOf(events[sizes.indexOf(largest)]!);
    const cycles = events.filter((e) => kindOf(e) === 'activityTaskCompleted').length;
    const runs = [...taskRunMs(events), ...taskRunMs(latest)];
    const continued = latest[0] && latest[0].workflowExecutionStartedEventAttributes?.continuedExecutionRunId ? latest[0] : undefined;
    return {
      vms: n,
      cycles: s.cycles,
      firstRun: {
        events: events.length,
        cycles,
        largestEventBytes: largest,
        largestEventKind: largestKind,
        historyBytesPerCycle: round(sizes.reduce((a, b) => a + b, 0) / Math.max(1, cycles), 0),
      },
      carriedStartBytes: continued ? eventBytes(continued) : undefined,
      workflowTaskMs: {
        p50: round(percentile(runs, 50), 1),
        p95: round(percentile(runs, 95), 1),
        max: round(Math.max(...runs), 1),
        maxAfterFirst: round(Math.max(...runs.slice(1)), 1),
      },
      ledger: s.ledger,
      killed: killed.length,
      lostTold: [...events, ...latest].filter((e) => kindOf(e) === 'signalExternalWorkflowExecutionInitiated').length,
    };
  } finally {
    await lab.close();
  }
}

async function main(): Promise<void> {
  const out = [];
  for (const n of SIZES) {
    log(`${n} Ready VMs in one region`);
    out.push(await oneSize(n));
    log(JSON.stringify(out.at(-1)));
  }
  process.stdout.write(`${JSON.stringify({ metric: 'P9', cycles: CYCLES, runs: out })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
