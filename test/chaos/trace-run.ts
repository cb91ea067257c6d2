/**
 * One trace on one lane: starts its VMs (in one or two deployments), drives their scripts (cancel,
 * teardown, terminate, vanish, spot preemption, duplicate and repeated starts), follows a
 * `--recover` relaunch into its new run, samples status and cloud, kills the
 * worker at the kill points, converges, waits for the account watchers to sweep what terminated
 * workflows left, and collects the evidence the oracle judges.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils';
import type { vmWorkflow } from '../../src/workflows';
import { cancelSignal, statusQuery, teardownSignal, vmWorkflowId, type Stage, type VmStatus } from '../../src/core/api';
import type { Tuning } from '../../src/core/tuning';
import { withWatcherTuning } from '../../src/core/watcher';
import { decodedHistoryText, findSecrets } from '../harness/secrets';
import type { CloudCall, CloudInstance, PreemptionPlayed } from './evidence';
import { readHistory, type RunFacts } from './history';
import { CHAOS_TUNING, CHAOS_WATCHER, type KitContext, type Lane } from './lane';
import { foreignDeletions, lostDelays } from './invariants-watcher';
import { preemptionOutcomes } from './invariants-spot';
import { judge, type Evidence, type Sample, type Violation } from './oracle';
import { GEOGRAPHY, vmKey, vmName, type KillPoint, type Trace, type VmScript } from './trace';

/**
 * Beyond the orphan grace and one (slow) watcher cycle: the sweep's own delete, wait-gone and
 * cleanup, a second sweep cycle when the trace's faults refuse deletes (a `delete` Transient ×4
 * outlasts one sweep's 3 tries), and a loaded machine (12 lanes on 2 shared cores: 5 s let 4 of
 * 256 fake traces through late; 15 s left 3 side resources of traces with failing deletes).
 */
export const SWEEP_ALLOWANCE_MS = 30_000;

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
  /** Instances still live after the orphan grace + one watcher cycle (+ allowance). */
  orphansLeft: number;
  /** Instances one install removed at the cloud although another install owned them. */
  foreignDeletions: number;
  /** Per vanished VM: ms from the vanish to `lost` (absent: never lost). */
  lostMs: number[];
  /** Spot preemptions played (with a notice among them), and what became of the preempted VMs. */
  preemptions: { played: number; withNotice: number; readyAgain: number; lost: number; relaunchFailed: number };
  duplicates: number;
  kills: number;
  runs: RunRecord[];
  ms: number;
}

/** Run one trace; `tag` keeps its VM names distinct from every other run of the same seed. */
export function runTrace(lane: Lane, trace: Trace, tag: string): Promise<TraceOutcome> {
  return new TraceRun(lane, lane.kit, trace, tag).run();
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const STAGE_RANK: Partial<Record<Stage, number>> = { planning: 1, preparing: 2, creating: 3, booting: 4, connecting: 5, ready: 6, 'tearing-down': 7 };

interface VmState {
  script: VmScript;
  name: string;
  /** The evidence's key (`vmKey`): the name, plus `/b` in the second deployment. */
  key: string;
  second: boolean;
  workflowId: string;
  taskQueue: string;
  /** The install's server (each install has its own). */
  kit: KitContext;
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
  private readonly vanishedAt: Record<string, number> = {};
  private readonly vanishedIds: Record<string, number> = {};
  private readonly preempted: Record<string, PreemptionPlayed> = {};
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
    const state = (script: VmScript, second: boolean): VmState => {
      const name = vmName(trace, script.vm, tag);
      const d = lane.deployments[second ? 1 : 0];
      return {
        script,
        name,
        key: vmKey(name, second),
        second,
        // The second install's own server: its workflow ids are the first's, as two users' would be.
        workflowId: vmWorkflowId(name),
        taskQueue: d.taskQueue,
        kit: d.kit,
        runs: [],
        closed: new Map(),
        open: false,
        quiet: true,
        maxRank: 0,
        described: false,
      };
    };
    this.vms = [...trace.vms.map((v) => state(v, false)), ...(trace.second ?? []).map((v) => state(v, true))];
    this.names = this.vms.map((v) => v.key);
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
  private async retrying<T>(fn: () => Promise<T>, budgetMs = 60_000, kit: KitContext = this.kit): Promise<T> {
    const until = Date.now() + budgetMs;
    for (;;) {
      try {
        return await kit.connection.withDeadline(Date.now() + 5_000, fn);
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError || Date.now() > until || isNotFound(err)) throw err;
        await sleep(500);
      }
    }
  }

  private async start(vm: VmState): Promise<WorkflowHandle<typeof vmWorkflow>> {
    const geo = GEOGRAPHY[this.trace.level];
    let tries = 0;
    const started = this.retrying(
      () => {
        tries += 1;
        return vm.kit.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
          taskQueue: vm.taskQueue,
          workflowId: vm.workflowId,
          args: [
            {
              spec: {
                name: vm.name,
                k8s: 'off',
                regions: geo.regions,
                instanceTypes: geo.instanceTypes,
                ...(vm.script.parallel !== undefined ? { parallel: vm.script.parallel } : {}),
                ...(vm.script.spot ? { spot: vm.script.spot } : {}),
                ...(vm.script.recover ? { recover: true } : {}),
              },
              tuning: this.tuning,
            },
          ],
          staticSummary: `chaos ${this.trace.level} seed ${this.trace.seed}${this.tag}${vm.second ? ' (second install)' : ''}`,
        });
      },
      60_000,
      vm.kit,
    );
    const h = await started.catch(async (err: unknown) => {
      // A retried start whose first try the server accepted (its answer lost to the deadline or a
      // restart): the run it refuses to start again is this one.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) || tries < 2) throw err;
      const d = await this.retrying(() => vm.kit.client.workflow.getHandle(vm.workflowId).describe(), 60_000, vm.kit);
      return Object.assign(vm.kit.client.workflow.getHandle<typeof vmWorkflow>(vm.workflowId, d.runId), { firstExecutionRunId: d.runId });
    });
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
    vm.runs.push({ vm: vm.key, workflowId: h.workflowId, runId });
    vm.closed.set(runId, this.watchClose(vm, h, runId));
  }

  /**
   * Polls describe until the run closes; then the cloud must hold nothing of the VM. A run that
   * continued as new (`--recover` relaunching a lost VM) is followed into its new run, which is
   * recorded as one more run of the VM.
   */
  private async watchClose(vm: VmState, h: WorkflowHandle, firstRunId: string): Promise<void> {
    let runId = firstRunId;
    while (!this.done) {
      const handle = vm.kit.client.workflow.getHandle(h.workflowId, runId);
      const d = await vm.kit.connection.withDeadline(Date.now() + 5_000, () => handle.describe()).catch(() => undefined);
      if (d?.status.name === 'CONTINUED_AS_NEW') {
        const next = await this.nextRun(vm, runId);
        if (next === undefined) return;
        runId = next;
        continue;
      }
      if (d && d.status.name !== 'RUNNING') {
        if (vm.handle === h && vm.runs[vm.runs.length - 1]?.runId === runId) vm.open = false;
        const held = this.live().filter((i) => i.vmName === vm.key);
        if (held.length > 0 && d.status.name !== 'TERMINATED')
          this.closedWhileHolding.push(`${vm.key} ${runId.slice(-8)} ended ${d.status.name} holding ${held.map((i) => i.id).join(', ')}`);
        return;
      }
      await sleep(250);
    }
  }

  /**
   * The run `runId` continued as: the workflow's latest run, recorded as the VM's next run.
   * Undefined when `runId` is not the VM's latest (a duplicate start took over) or the server does
   * not answer. Hazard: a run that continued twice between two looks skips the middle one (one
   * preemption per VM per trace: it does not happen).
   */
  private async nextRun(vm: VmState, runId: string): Promise<string | undefined> {
    if (vm.runs[vm.runs.length - 1]?.runId !== runId) return undefined;
    const latest = await this.retrying(() => vm.kit.client.workflow.getHandle(vm.workflowId).describe(), 60_000, vm.kit).catch(() => undefined);
    if (!latest || latest.runId === runId) return undefined;
    vm.runs.push({ vm: vm.key, workflowId: vm.workflowId, runId: latest.runId });
    return latest.runId;
  }

  private async query(vm: VmState, h: WorkflowHandle): Promise<VmStatus | undefined> {
    return vm.kit.connection.withDeadline(Date.now() + 3_000, () => h.query(statusQuery)).catch(() => undefined);
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
    await this.retrying(() => h.signal(which === 'cancel' ? cancelSignal : teardownSignal), 30_000, vm.kit).catch(() => undefined);
  }

  private async script(vm: VmState): Promise<void> {
    const s = vm.script;
    await sleep(s.startAfterMs);
    const first = await this.start(vm);
    const firstRun = vm.runs[vm.runs.length - 1]!.runId;
    if (s.duplicateStart) {
      await sleep(200);
      try {
        const again = await this.retrying(
          () =>
            vm.kit.client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
              taskQueue: vm.taskQueue,
              workflowId: vm.workflowId,
              args: [{ spec: { name: vm.name, k8s: 'off' }, tuning: this.tuning }],
            }),
          60_000,
          vm.kit,
        );
        // Accepted: fine only if the first run had already ended.
        const d = await this.retrying(() => vm.kit.client.workflow.getHandle(first.workflowId, firstRun).describe(), 60_000, vm.kit);
        if (d.status.name === 'RUNNING') this.duplicateStartsAccepted.push(vm.key);
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
      case 'terminate':
      case 'terminate-when-ready':
        if (op.op === 'terminate') await sleep(op.afterMs);
        else await this.until(vm, (st) => st === 'ready');
        ends = await this.terminate(vm);
        break;
      case 'vanish-when-ready': {
        await this.until(vm, (st) => st === 'ready');
        // Vanish when the other VMs of the trace are quiet too (the fake's state file is shared).
        await Promise.all(this.vms.filter((o) => o !== vm).map((o) => this.within(o, (st) => st === 'ready', 10_000)));
        const st = vm.open && vm.handle ? await this.query(vm, vm.handle) : undefined;
        const id = st?.stage === 'ready' ? st.instanceIds[0] : undefined;
        if (id) {
          vm.quiet = false;
          this.vanished.push(vm.key);
          await this.lane.cloud.vanish(id);
          this.vanishedAt[vm.key] = Date.now();
          this.vanishedIds[id] = Date.now();
          ends = true;
        }
        break;
      }
      case 'preempt-when-ready':
        ends = await this.preempt(vm, op.noticeMs);
        break;
      case 'none':
        break;
    }
    const settled = ends ? await this.closed(vm) : await this.until(vm, (st) => st === 'ready');
    if (!settled) this.unconverged.push(`${vm.key}: not ${ends ? 'ended' : 'ready or ended'} after its ${op.op} (stage ${vm.lastStage ?? '?'})`);
    if (s.restart && !vm.open) {
      await this.start(vm);
      if (!(await this.until(vm, (st) => st === 'ready'))) this.unconverged.push(`${vm.key}: restarted run not ready or ended (stage ${vm.lastStage ?? '?'})`);
    }
  }

  /**
   * The cloud reclaims the VM's spot instance once it is Ready (alone at the cloud: a hedged
   * launch's losers gone), with a notice of `noticeMs` or none. Not played on an on-demand
   * instance (`--spot auto` may land there) nor on a cloud that cannot preempt. True when the VM
   * is to end (lost: no `--recover`); under `--recover` waits until it is Ready again on another
   * instance (or ended).
   */
  private async preempt(vm: VmState, noticeMs: number): Promise<boolean> {
    const reclaim = this.lane.cloud.preempt?.bind(this.lane.cloud);
    await this.until(vm, (st) => st === 'ready');
    await Promise.all(this.vms.filter((o) => o !== vm).map((o) => this.within(o, (st) => st === 'ready', 10_000)));
    for (let i = 0; i < 40 && this.live().filter((x) => x.vmName === vm.key).length > 1; i++) await sleep(250);
    const st = vm.open && vm.handle ? await this.query(vm, vm.handle) : undefined;
    const id = st?.stage === 'ready' && st.offer?.market === 'spot' ? st.instanceIds[0] : undefined;
    if (!id || !reclaim) return false;
    vm.quiet = false;
    const p = await reclaim(id, noticeMs);
    if (!p) return false;
    const recover = vm.script.recover === true;
    this.preempted[vm.key] = { id, t: p.noticeAt - this.t0, noticeAt: p.noticeAt, reclaimAt: p.reclaimAt, noticeMs, recover };
    if (!recover) return true;
    // Until a sample shows it Ready on another instance the cloud bills (what the oracle reads), or it ended.
    const t = p.noticeAt - this.t0;
    const readyAgain = (s: Sample): boolean =>
      s.vm === vm.key && s.t >= t && s.stage === 'ready' && !!s.instanceIds?.[0] && s.instanceIds[0] !== id && s.live.some((i) => i.id === s.instanceIds![0]);
    const expired = this.deadline(Date.now());
    while (!expired() && vm.open && !this.samples.some(readyAgain)) await sleep(250);
    return false;
  }

  /** Temporal terminate, as the Web UI's button: nothing of gpuprov runs; the watcher must sweep. */
  private async terminate(vm: VmState): Promise<boolean> {
    if (!vm.handle || !vm.open) return false;
    vm.quiet = false;
    const h = vm.handle;
    await this.retrying(() => h.terminate('chaos: terminated behind gpuprov'), 30_000, vm.kit).catch(() => undefined);
    return true;
  }

  /** The cloud's live instances, keyed like the evidence (`vmKey` by owner). */
  private live(): CloudInstance[] {
    return this.lane.cloud.live().map((i) => ({ ...i, vmName: i.vmName === '?' ? '?' : this.lane.keyOf(i.vmName, i.owner) }));
  }

  /** The trace's side resources at the cloud, as `key@region`. */
  private sideResources(): string[] {
    return this.lane.cloud
      .sideResources()
      .map((r) => {
        const [vm = '', region = '', owner] = r.split('@');
        return `${this.lane.keyOf(vm, owner)}@${region}`;
      })
      .filter((r) => this.names.includes(r.slice(0, r.lastIndexOf('@'))));
  }

  private mine(): CloudInstance[] {
    return this.live().filter((i) => this.names.includes(i.vmName) || i.vmName === '?');
  }

  /**
   * Once every workflow closed, what is still live is an orphan (a terminated workflow's): wait
   * until the watchers swept it, at most the orphan grace plus one slow watcher cycle and an
   * allowance (more after disruptions), counted again from any instance that shows up late (an
   * activity still running when its workflow was terminated).
   */
  private async awaitSweep(): Promise<NonNullable<Evidence['orphans']>> {
    const t0 = Date.now();
    const budget = WATCHER.orphanGraceMs + WATCHER.slowIntervalMs + SWEEP_ALLOWANCE_MS + 70_000 * this.disrupted;
    const atClose = this.mine();
    const seen = new Set(atClose.map((i) => i.id));
    const seenSides = new Set(this.sideResources());
    let deadline = t0 + budget;
    let left = atClose;
    // A sweep removes the instance, waits until it is gone, then cleans up: wait for its side resources too.
    for (let i = 0; i < 10_000 && (left.length > 0 || this.sideResources().length > 0) && Date.now() < deadline; i++) {
      await sleep(200);
      left = this.mine();
      // Late ones (a prepare or create still running when its workflow was terminated) get a whole budget from when they show.
      const late = [...left.map((x) => x.id), ...this.sideResources()].filter((k) => !seen.has(k) && !seenSides.has(k));
      for (const k of late) seen.add(k);
      if (late.length > 0) deadline = Date.now() + budget;
    }
    return { atClose, left, waitedMs: Date.now() - t0 };
  }

  private async sampler(): Promise<void> {
    while (!this.done) {
      const queried = await Promise.all(
        this.vms.map(async (vm) => {
          const quiet = vm.quiet && !this.lane.busy;
          const h = vm.open ? vm.handle : undefined;
          const st = h ? await this.query(vm, h) : undefined;
          return { vm, h, st, quiet };
        }),
      );
      let live: CloudInstance[];
      try {
        live = this.live();
      } catch {
        await sleep(100);
        continue;
      }
      for (const { vm, h, st, quiet } of queried) {
        const mine = live.filter((i) => i.vmName === vm.key);
        const seen = this.everSeen.get(vm.key) ?? new Set<string>();
        for (const i of mine) seen.add(i.id);
        this.everSeen.set(vm.key, seen);
        if (st) {
          vm.lastStage = st.stage;
          vm.maxRank = Math.max(vm.maxRank, STAGE_RANK[st.stage] ?? 0);
        }
        const sample: Sample = {
          t: Date.now() - this.t0,
          vm: vm.key,
          ...(h ? { runId: vm.runs[vm.runs.length - 1]!.runId } : {}),
          ...(st ? { stage: st.stage, instanceIds: st.instanceIds } : {}),
          ...(st?.location ? { region: st.location.region } : {}),
          ...(st?.endpoint ? { endpointPort: st.endpoint.port } : {}),
          quiet: quiet && st !== undefined && vm.quiet && !this.lane.busy,
          live: mine,
        };
        if (sample.quiet && st?.stage === 'ready' && !vm.described && h) {
          vm.described = true;
          const described = async (): Promise<unknown> =>
            (await vm.kit.connection.withDeadline(Date.now() + 3_000, () => h.describe()).catch(() => undefined))?.searchAttributes?.GpuprovStage?.[0];
          let attr = await described();
          // A query may be answered from a workflow task whose completion (with its upsert) the server
          // then refuses under load (task timed out) and takes again: compare once more after a second.
          if (typeof attr === 'string' && attr !== st.stage) {
            await sleep(1_000);
            const again = await this.query(vm, h);
            attr = await described();
            if (again) sample.stage = again.stage;
          }
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
    if (this.trace.second?.length) await this.lane.second();
    this.lane.cloud.arm(this.trace, this.tag);
    const sampler = this.sampler();
    const killer = this.killer();
    const killsBefore = this.lane.kills;
    await Promise.all(this.vms.map((vm) => this.script(vm).catch((err: unknown) => this.unconverged.push(`${vm.key}: script error ${String(err)}`))));

    // Convergence: every VM ready or ended; then faults stop and everything is torn down.
    for (const vm of this.vms) {
      if (!(await this.until(vm, (st) => st === 'ready'))) this.unconverged.push(`${vm.key}: not ready or ended (stage ${vm.lastStage ?? '?'})`);
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
        this.unconverged.push(`${vm.key}: not ended after the final teardown (stage ${vm.lastStage ?? '?'})`);
        await this.retrying(() => vm.handle!.terminate('chaos: did not converge'), 20_000, vm.kit).catch(() => undefined);
      }
    }
    await Promise.all(this.vms.flatMap((vm) => [...vm.closed.values()]));
    this.done = true;
    await Promise.all([sampler, killer]);

    const orphans = await this.awaitSweep();
    let finalLive = this.mine();
    if (finalLive.some((i) => i.vmName === '?')) {
      await sleep(1_000);
      finalLive = this.mine();
    }
    const finalSideResources = this.sideResources();
    const calls = this.lane.cloud
      .calls()
      ?.map((c): CloudCall => (c.vmName === undefined ? c : { ...c, vmName: this.lane.keyOf(c.vmName, c.deployment) }))
      .filter((c) => c.vmName === undefined || this.names.includes(c.vmName));

    const runs = this.vms.flatMap((vm) => vm.runs.map((r) => ({ r, kit: vm.kit })));
    const facts: RunFacts[] = [];
    const secrets: Record<string, string[]> = {};
    for (const { r, kit } of runs) {
      const history = await this.retrying(() => kit.client.workflow.getHandle(r.workflowId, r.runId).fetchHistory(), 60_000, kit).catch(() => undefined);
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
      vanishedAt: this.vanishedAt,
      vanishedIds: this.vanishedIds,
      preempted: this.preempted,
      watcher: { fastIntervalMs: WATCHER.fastIntervalMs, readyIntervalMs: WATCHER.readyIntervalMs, orphanGraceMs: WATCHER.orphanGraceMs },
      orphans,
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
      orphansLeft: orphans.left.length,
      foreignDeletions: foreignDeletions(evidence).length,
      lostMs: Object.values(lostDelays(evidence)).filter((x): x is number => x !== undefined),
      preemptions: preemptionStats(evidence),
      duplicates: dupVms.size,
      kills: this.lane.kills - killsBefore,
      runs: runs.map((x) => x.r),
      ms: Date.now() - this.t0,
    };
  }
}

const WATCHER = withWatcherTuning(CHAOS_WATCHER);

function preemptionStats(ev: Evidence): TraceOutcome['preemptions'] {
  const played = Object.values(ev.preempted ?? {});
  const outcomes = Object.values(preemptionOutcomes(ev));
  return {
    played: played.length,
    withNotice: played.filter((p) => p.noticeMs > 0).length,
    readyAgain: outcomes.filter((o) => o === 'ready').length,
    lost: outcomes.filter((o) => o === 'lost').length,
    relaunchFailed: outcomes.filter((o) => o === 'relaunch-failed').length,
  };
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && err.name === 'WorkflowNotFoundError';
}
