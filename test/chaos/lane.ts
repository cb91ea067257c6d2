/**
 * A chaos lane: one worker process (SIGKILLed and restarted at the trace's kill points), its own
 * task queue and its own cloud, running one trace at a time. `runTrace` executes a trace against
 * the real dev server and collects the evidence the oracle judges.
 */
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils';
import type { vmWorkflow } from '../../src/workflows';
import { cancelSignal, statusQuery, teardownSignal, vmWorkflowId, type Stage, type VmStatus } from '../../src/core/api';
import type { Tuning } from '../../src/core/tuning';
import { decodedHistoryText, findSecrets } from '../harness/secrets';
import { spawnWorkerProcess, type WorkerProcess } from '../harness/worker-process';
import type { ChaosCloud } from './cloud';
import { readHistory, type RunFacts } from './history';
import { judge, type Evidence, type Sample, type Violation } from './oracle';
import { GEOGRAPHY, vmName, type KillPoint, type Trace, type VmScript } from './trace';

/** Fast timings (the logic is the production one); leaks retry quickly so they resolve within a trace. */
export const CHAOS_TUNING: Partial<Tuning> = {
  mutateMaxAttempts: 3,
  mutateInitialIntervalMs: 100,
  goneDeadlineMs: 5_000,
  leakBackoffMs: 300,
  leakMaxBackoffMs: 1_500,
  healthIntervalMs: 500,
  retryUntilUpDelayMs: 1_000,
};

/** What the lane needs from the kit: the server connection and the disruption counters. */
export interface KitContext {
  client: Client;
  connection: Connection;
  address: string;
  namespace: string;
  /** Dev server restarts so far (they disrupt every lane). */
  serverRestarts(): number;
  /** Extra environment of every lane's worker (the broken build's bundle). */
  workerEnv: Record<string, string>;
  log(line: string): void;
}

export interface RunRecord {
  vm: string;
  workflowId: string;
  runId: string;
  history?: History;
}

export interface TraceOutcome {
  trace: Trace;
  tag: string;
  lane: number;
  violations: Violation[];
  leaks: number;
  duplicates: number;
  kills: number;
  runs: RunRecord[];
  ms: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const STAGE_RANK: Partial<Record<Stage, number>> = { planning: 1, preparing: 2, creating: 3, booting: 4, connecting: 5, ready: 6, 'tearing-down': 7 };

export class Lane {
  readonly taskQueue: string;
  kills = 0;
  restarts = 0;
  private worker?: WorkerProcess;
  private killing = false;
  private stopped = false;
  private respawn?: Promise<void>;

  constructor(
    readonly id: number,
    readonly cloud: ChaosCloud,
    private readonly kit: KitContext,
    runTag: string,
  ) {
    this.taskQueue = `chaos-${runTag}-${id}`;
  }

  get busy(): boolean {
    return this.killing || this.respawn !== undefined;
  }

  /** Spawn the worker process, retrying while the dev server is down (a server restart). */
  async start(): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        const w = await spawnWorkerProcess({
          address: this.kit.address,
          namespace: this.kit.namespace,
          taskQueue: this.taskQueue,
          env: { ...this.cloud.workerEnv, ...this.kit.workerEnv },
          readyTimeoutMs: 120_000,
        });
        this.worker = w;
        // A worker that dies on its own (e.g. the server went away for too long) is restarted.
        w.child.once('exit', () => {
          if (this.stopped || this.killing || this.worker !== w) return;
          this.kit.log(`lane ${this.id}: worker exited on its own; restarting`);
          this.restarts += 1;
          this.respawn = this.start().finally(() => (this.respawn = undefined));
        });
        return;
      } catch (err) {
        if (i >= 10) throw err;
        await sleep(2_000);
      }
    }
  }

  /** SIGKILL the worker, then start a new one. */
  async kill(): Promise<void> {
    if (!this.worker || this.killing) return;
    this.killing = true;
    try {
      await this.worker.kill('SIGKILL');
      this.kills += 1;
      await this.start();
      this.restarts += 1;
    } finally {
      this.killing = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.respawn?.catch(() => undefined);
    await this.worker?.stop();
  }

  /** Run one trace; `tag` keeps its VM names distinct from every other run of the same seed. */
  async runTrace(trace: Trace, tag: string): Promise<TraceOutcome> {
    return new TraceRun(this, this.kit, trace, tag).run();
  }
}

interface VmState {
  script: VmScript;
  name: string;
  handle?: WorkflowHandle<typeof vmWorkflow>;
  runs: RunRecord[];
  closed: Map<string, Promise<void>>;
  open: boolean;
  quiet: boolean;
  lastStage?: string;
  maxRank: number;
  described: boolean;
}

class TraceRun {
  private readonly vms: VmState[];
  private readonly samples: Sample[] = [];
  private readonly everSeen = new Map<string, Set<string>>();
  private readonly closedWhileHolding: string[] = [];
  private readonly duplicateStartsAccepted: string[] = [];
  private readonly vanished: string[] = [];
  private readonly unconverged: string[] = [];
  private readonly names: string[];
  private done = false;
  private disruptions = 0;
  private readonly t0 = Date.now();
  private readonly serverRestartsAtStart: number;
  private readonly tuning: Partial<Tuning>;

  constructor(
    private readonly lane: Lane,
    private readonly kit: KitContext,
    private readonly trace: Trace,
    private readonly tag: string,
  ) {
    this.vms = trace.vms.map((script) => ({
      script,
      name: vmName(trace, script.vm, tag),
      runs: [],
      closed: new Map(),
      open: false,
      quiet: true,
      maxRank: 0,
      described: false,
    }));
    this.names = this.vms.map((v) => v.name);
    this.serverRestartsAtStart = kit.serverRestarts();
    this.tuning = CHAOS_TUNING;
  }

  private get disrupted(): number {
    return this.disruptions + this.kit.serverRestarts() - this.serverRestartsAtStart;
  }

  /** Waits are generous after a SIGKILL: an activity in flight is retried only after its start-to-close timeout. */
  private deadline(from: number): () => boolean {
    return () => Date.now() > from + 90_000 + 150_000 * this.disrupted;
  }

  /** A client call that survives a dev-server restart (retries until `budgetMs`). */
  private async retrying<T>(fn: () => Promise<T>, budgetMs = 60_000): Promise<T> {
    const until = Date.now() + budgetMs;
    for (;;) {
      try {
        return await this.kit.connection.withDeadline(Date.now() + 5_000, fn);
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError || Date.now() > until || isNotFound(err)) throw err;
        await sleep(500);
      }
    }
  }

  private async start(vm: VmState): Promise<WorkflowHandle<typeof vmWorkflow>> {
    const geo = GEOGRAPHY[this.trace.level];
    const h = await this.retrying(() =>
      this.kit.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
        taskQueue: this.lane.taskQueue,
        workflowId: vmWorkflowId(vm.name),
        args: [
          {
            spec: {
              name: vm.name,
              k8s: 'off',
              regions: geo.regions,
              instanceTypes: geo.instanceTypes,
              ...(vm.script.parallel !== undefined ? { parallel: vm.script.parallel } : {}),
            },
            tuning: this.tuning,
          },
        ],
        staticSummary: `chaos ${this.trace.level} seed ${this.trace.seed}${this.tag}`,
      }),
    );
    this.track(vm, h, h.firstExecutionRunId);
    return h;
  }

  private track(vm: VmState, h: WorkflowHandle<typeof vmWorkflow>, runId: string): void {
    vm.handle = h;
    vm.open = true;
    vm.quiet = true;
    vm.maxRank = 0;
    vm.described = false;
    delete vm.lastStage;
    vm.runs.push({ vm: vm.name, workflowId: h.workflowId, runId });
    vm.closed.set(runId, this.watchClose(vm, h, runId));
  }

  /** Polls describe until the run closes; then the cloud must hold nothing of the VM. */
  private async watchClose(vm: VmState, h: WorkflowHandle, runId: string): Promise<void> {
    const handle = this.kit.client.workflow.getHandle(h.workflowId, runId);
    while (!this.done) {
      const d = await this.kit.connection.withDeadline(Date.now() + 5_000, () => handle.describe()).catch(() => undefined);
      if (d && d.status.name !== 'RUNNING') {
        if (vm.handle === h) vm.open = false;
        const held = this.lane.cloud.live().filter((i) => i.vmName === vm.name);
        if (held.length > 0 && d.status.name !== 'TERMINATED')
          this.closedWhileHolding.push(`${vm.name} ${runId.slice(-8)} ended ${d.status.name} holding ${held.map((i) => i.id).join(', ')}`);
        return;
      }
      await sleep(250);
    }
  }

  private async query(h: WorkflowHandle): Promise<VmStatus | undefined> {
    return this.kit.connection.withDeadline(Date.now() + 3_000, () => h.query(statusQuery)).catch(() => undefined);
  }

  /** Waits for `pred` on the sampled stage, or the run's close; false on timeout. */
  private async until(vm: VmState, pred: (stage: string | undefined) => boolean, from = Date.now()): Promise<boolean> {
    const expired = this.deadline(from);
    while (!expired()) {
      if (!vm.open || pred(vm.lastStage)) return true;
      await sleep(100);
    }
    return false;
  }

  /** Like `until`, bounded by `ms` instead of the trace's deadline. */
  private async within(vm: VmState, pred: (stage: string | undefined) => boolean, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (!vm.open || pred(vm.lastStage)) return true;
      await sleep(100);
    }
    return false;
  }

  private async closed(vm: VmState, from = Date.now()): Promise<boolean> {
    return this.until(vm, () => false, from);
  }

  private async signal(vm: VmState, which: 'cancel' | 'teardown'): Promise<void> {
    if (!vm.handle || !vm.open) return;
    vm.quiet = false;
    const h = vm.handle;
    await this.retrying(() => h.signal(which === 'cancel' ? cancelSignal : teardownSignal), 30_000).catch(() => undefined);
  }

  private async script(vm: VmState): Promise<void> {
    const s = vm.script;
    await sleep(s.startAfterMs);
    const first = await this.start(vm);
    const firstRun = vm.runs[vm.runs.length - 1]!.runId;
    if (s.duplicateStart) {
      await sleep(200);
      try {
        const again = await this.retrying(() =>
          this.kit.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
            taskQueue: this.lane.taskQueue,
            workflowId: vmWorkflowId(vm.name),
            args: [{ spec: { name: vm.name, k8s: 'off' }, tuning: this.tuning }],
          }),
        );
        // Accepted: fine only if the first run had already ended.
        const d = await this.retrying(() => this.kit.client.workflow.getHandle(first.workflowId, firstRun).describe());
        if (d.status.name === 'RUNNING') this.duplicateStartsAccepted.push(vm.name);
        this.track(vm, again, again.firstExecutionRunId);
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }
    const op = s.op;
    let ends = false;
    switch (op.op) {
      case 'cancel':
      case 'teardown':
        await sleep(op.afterMs);
        await this.signal(vm, op.op);
        ends = true;
        break;
      case 'teardown-when-ready':
        await this.until(vm, (st) => st === 'ready');
        await this.signal(vm, 'teardown');
        ends = true;
        break;
      case 'vanish-when-ready': {
        await this.until(vm, (st) => st === 'ready');
        // Vanish when the other VMs of the trace are quiet too (the fake's state file is shared).
        await Promise.all(this.vms.filter((o) => o !== vm).map((o) => this.within(o, (st) => st === 'ready', 10_000)));
        const st = vm.open && vm.handle ? await this.query(vm.handle) : undefined;
        const id = st?.stage === 'ready' ? st.instanceIds[0] : undefined;
        if (id) {
          vm.quiet = false;
          this.vanished.push(vm.name);
          await this.lane.cloud.vanish(id);
          ends = true;
        }
        break;
      }
      case 'none':
        break;
    }
    const settled = ends ? await this.closed(vm) : await this.until(vm, (st) => st === 'ready');
    if (!settled) this.unconverged.push(`${vm.name}: not ${ends ? 'ended' : 'ready or ended'} after its ${op.op} (stage ${vm.lastStage ?? '?'})`);
    if (s.restart && !vm.open) {
      await this.start(vm);
      if (!(await this.until(vm, (st) => st === 'ready'))) this.unconverged.push(`${vm.name}: restarted run not ready or ended (stage ${vm.lastStage ?? '?'})`);
    }
  }

  private async sampler(): Promise<void> {
    while (!this.done) {
      const queried = await Promise.all(
        this.vms.map(async (vm) => {
          const quiet = vm.quiet && !this.lane.busy;
          const h = vm.open ? vm.handle : undefined;
          const st = h ? await this.query(h) : undefined;
          return { vm, h, st, quiet };
        }),
      );
      let live: ReturnType<ChaosCloud['live']>;
      try {
        live = this.lane.cloud.live();
      } catch {
        await sleep(100);
        continue;
      }
      for (const { vm, h, st, quiet } of queried) {
        const mine = live.filter((i) => i.vmName === vm.name);
        const seen = this.everSeen.get(vm.name) ?? new Set<string>();
        for (const i of mine) seen.add(i.id);
        this.everSeen.set(vm.name, seen);
        if (st) {
          vm.lastStage = st.stage;
          vm.maxRank = Math.max(vm.maxRank, STAGE_RANK[st.stage] ?? 0);
        }
        const sample: Sample = {
          t: Date.now() - this.t0,
          vm: vm.name,
          ...(h ? { runId: vm.runs[vm.runs.length - 1]!.runId } : {}),
          ...(st ? { stage: st.stage, instanceIds: st.instanceIds } : {}),
          ...(st?.location ? { region: st.location.region } : {}),
          ...(st?.endpoint ? { endpointPort: st.endpoint.port } : {}),
          quiet: quiet && st !== undefined && vm.quiet && !this.lane.busy,
          live: mine,
        };
        if (sample.quiet && st?.stage === 'ready' && !vm.described && h) {
          vm.described = true;
          const d = await this.kit.connection.withDeadline(Date.now() + 3_000, () => h.describe()).catch(() => undefined);
          const attr = d?.searchAttributes?.GpuprovStage?.[0];
          if (typeof attr === 'string' && vm.quiet) sample.describedStage = attr;
        }
        this.samples.push(sample);
      }
      await sleep(250);
    }
  }

  private triggered(k: KillPoint): boolean {
    if (k.at === 'call') return this.lane.cloud.callCount() >= k.n;
    const vm = this.vms[k.vm];
    if (!vm) return false;
    const rank = STAGE_RANK[k.stage];
    return rank !== undefined ? vm.maxRank >= rank : vm.lastStage === k.stage;
  }

  private async killer(): Promise<void> {
    const pending = [...this.trace.kills];
    while (!this.done && pending.length > 0) {
      const k = pending[0]!;
      if (this.triggered(k)) {
        pending.shift();
        this.disruptions += 1;
        this.kit.log(
          `lane ${this.lane.id}: seed ${this.trace.seed}${this.tag}: SIGKILL worker at ${k.at === 'call' ? `call ${k.n}` : `${this.names[k.vm] ?? '?'} ${k.stage}`}`,
        );
        await this.lane.kill().catch((err: unknown) => this.kit.log(`lane ${this.lane.id}: restart failed: ${String(err)}`));
      }
      await sleep(k.at === 'call' ? 20 : 50);
    }
    // A loaded machine can starve this loop until the trace is over; a kill point whose moment
    // came still fires (late), so the trace's kills do not depend on the scheduler.
    for (const k of pending.filter((p) => this.triggered(p))) {
      this.disruptions += 1;
      this.kit.log(
        `lane ${this.lane.id}: seed ${this.trace.seed}${this.tag}: SIGKILL worker late (trace over) for ${k.at === 'call' ? `call ${k.n}` : k.stage}`,
      );
      await this.lane.kill().catch((err: unknown) => this.kit.log(`lane ${this.lane.id}: restart failed: ${String(err)}`));
    }
  }

  async run(): Promise<TraceOutcome> {
    this.lane.cloud.arm(this.trace, this.tag);
    const sampler = this.sampler();
    const killer = this.killer();
    const killsBefore = this.lane.kills;
    await Promise.all(this.vms.map((vm) => this.script(vm).catch((err: unknown) => this.unconverged.push(`${vm.name}: script error ${String(err)}`))));

    // Convergence: every VM ready or ended; then faults stop and everything is torn down.
    for (const vm of this.vms) {
      if (!(await this.until(vm, (st) => st === 'ready'))) this.unconverged.push(`${vm.name}: not ready or ended (stage ${vm.lastStage ?? '?'})`);
    }
    await this.lane.cloud.clearFaults();
    const from = Date.now();
    for (const vm of this.vms) await this.signal(vm, 'teardown');
    for (const vm of this.vms) {
      const expired = this.deadline(from);
      while (vm.open && !expired()) {
        await this.within(vm, () => false, 5_000); // then nudge: a leaked teardown retries at once on a signal
        if (vm.open) await this.signal(vm, 'teardown');
      }
      if (vm.open) {
        this.unconverged.push(`${vm.name}: not ended after the final teardown (stage ${vm.lastStage ?? '?'})`);
        await this.retrying(() => vm.handle!.terminate('chaos: did not converge'), 20_000).catch(() => undefined);
      }
    }
    await Promise.all(this.vms.flatMap((vm) => [...vm.closed.values()]));
    this.done = true;
    await Promise.all([sampler, killer]);

    let finalLive = this.lane.cloud.live().filter((i) => this.names.includes(i.vmName) || i.vmName === '?');
    if (finalLive.some((i) => i.vmName === '?')) {
      await sleep(1_000);
      finalLive = this.lane.cloud.live().filter((i) => this.names.includes(i.vmName) || i.vmName === '?');
    }
    const finalSideResources = this.lane.cloud.sideResources().filter((r) => this.names.includes(r.split('@')[0]!));
    const calls = this.lane.cloud.calls()?.filter((c) => c.vmName === undefined || this.names.includes(c.vmName));

    const runs = this.vms.flatMap((vm) => vm.runs);
    const facts: RunFacts[] = [];
    const secrets: Record<string, string[]> = {};
    for (const r of runs) {
      const history = await this.retrying(() => this.kit.client.workflow.getHandle(r.workflowId, r.runId).fetchHistory()).catch(() => undefined);
      if (!history) continue;
      r.history = history;
      const json = historyToJSON(history);
      facts.push(readHistory(json, r.workflowId, r.runId, r.vm));
      secrets[r.runId] = findSecrets(decodedHistoryText(json));
    }
    this.lane.cloud.sweep();

    const evidence: Evidence = {
      trace: this.trace,
      mutateMaxAttempts: CHAOS_TUNING.mutateMaxAttempts!,
      runs: facts,
      samples: this.samples,
      ...(calls ? { calls } : {}),
      everSeen: Object.fromEntries([...this.everSeen].map(([k, s]) => [k, [...s]])),
      finalLive,
      finalSideResources,
      unconverged: this.unconverged,
      closedWhileHolding: this.closedWhileHolding,
      duplicateStartsAccepted: this.duplicateStartsAccepted,
      vanished: this.vanished,
      disruptions: this.disrupted,
      replayErrors: {},
      secrets,
    };
    const violations = judge(evidence);
    const dupVms = new Set(violations.filter((x) => x.invariant === 'at-most-n-live-per-name' || x.invariant === 'one-create-per-attempt').map((x) => x.vm));
    return {
      trace: this.trace,
      tag: this.tag,
      lane: this.lane.id,
      violations,
      leaks: finalLive.length,
      duplicates: dupVms.size,
      kills: this.lane.kills - killsBefore,
      runs,
      ms: Date.now() - this.t0,
    };
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && err.name === 'WorkflowNotFoundError';
}
