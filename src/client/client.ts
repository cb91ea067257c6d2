/**
 * GpuprovClient: the typed library over `@temporalio/client` that the CLI uses and other services
 * may use. Messages and inputs are the public API of `src/core/api.ts` and `src/core/fleet-api.ts`;
 * every start names its workflow's type (`start<typeof vmWorkflow>`), so arguments and results are
 * type-checked without loading workflow code here.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowIdConflictPolicy, type SignalDefinition } from '@temporalio/common';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { BlockOfferingsInput, BlockOfferingsOutput, PlanInput, PlanOutput } from '../activities';
import {
  cancelSignal,
  retryK8sSignal,
  statusQuery,
  TASK_QUEUE,
  teardownSignal,
  vmWorkflowId,
  type RecoveryRecord,
  type Stage,
  type VmSpec,
  type VmStatus,
} from '../core/api';
import { RECOVERY_MEMO } from '../core/recovery';
import {
  applyShapeUpdate,
  fleetStatusQuery,
  fleetTeardownSignal,
  fleetWorkflowId,
  type ApplyShapeResult,
  type FleetStatus,
  type FleetWorkflowInput,
  type SlotStatus,
} from '../core/fleet-api';
import type { FleetShape } from '../core/fleet/types';
import { SA, startAttributes } from '../core/search-attributes';
import type { Tuning } from '../core/tuning';
import type { blockOfferingsWorkflow, fleetWorkflow, offersWorkflow, vmWorkflow } from '../workflows';

export type VmHandle = WorkflowHandle<typeof vmWorkflow>;
export type FleetHandle = WorkflowHandle<typeof fleetWorkflow>;

export interface StartResult {
  handle: VmHandle;
  /** False when a workflow for this name was already launching or up, and we attached to it. */
  started: boolean;
  /** True when the attached VM was in `k8s-failed` and its k3s step was asked to run again. */
  retriedK8s?: boolean;
}

export interface VmListing {
  name: string;
  workflowId: string;
  stage: string;
  cloud?: string;
  region?: string;
  instanceType?: string;
  /** Temporal execution status: RUNNING, COMPLETED, FAILED, … */
  execution: string;
  startedAt: string;
  /** `--recover`: relaunches so far and the last loss (from the workflow's memo; absent before a first relaunch). */
  recovered?: Pick<RecoveryRecord, 'count' | 'lastLostAt' | 'lastReason'>;
  /**
   * `list --all`, a workflow terminated or timed out before its VM ended (its `stage` is the last
   * it recorded): what the account watcher says of its instance now. `orphan`: listed, deleted
   * after the grace; `swept`: deleted at `sweptAt`; `not seen`: neither (nothing was created, or
   * the watcher has not looked since).
   */
  instance?: { state: 'orphan' | 'swept' | 'not seen'; sweptAt?: string };
}

/** `h` once the argument-less `signal` is delivered to it. */
async function signalled<H extends WorkflowHandle>(h: H, signal: SignalDefinition<[]>): Promise<H> {
  await h.signal(signal);
  return h;
}

export class GpuprovClient {
  /** Fleets: apply a shape, read status, tear down, find a node. */
  readonly fleet: FleetClient;

  constructor(
    readonly temporal: Client,
    readonly taskQueue: string = TASK_QUEUE,
  ) {
    this.fleet = new FleetClient(temporal, taskQueue);
  }

  private handle(name: string): VmHandle {
    return this.temporal.workflow.getHandle<typeof vmWorkflow>(vmWorkflowId(name));
  }

  /** Start the VM's workflow, or attach to the one already running for this name. */
  async start(spec: VmSpec, tuning?: Partial<Tuning>): Promise<StartResult> {
    const id = vmWorkflowId(spec.name);
    try {
      const d = await this.temporal.workflow.getHandle(id).describe();
      if (d.status.name === 'RUNNING') {
        const handle = this.handle(spec.name);
        // Starting a VM whose k3s step failed re-runs that step (the VM itself stays).
        if ((await handle.query(statusQuery)).stage === 'k8s-failed') {
          await handle.signal(retryK8sSignal);
          return { handle, started: false, retriedK8s: true };
        }
        return { handle, started: false };
      }
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    const gpu = spec.gpu ? `${spec.gpu.model}:${spec.gpu.count}` : 'no GPU';
    const handle = await this.temporal.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      workflowId: id,
      taskQueue: this.taskQueue,
      args: [{ spec, ...(tuning ? { tuning } : {}) }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: startAttributes(spec.name),
      staticSummary: `VM ${spec.name}: ${gpu} on ${spec.clouds?.join(', ') ?? 'any configured cloud'}`,
      staticDetails: `gpuprov VM **${spec.name}** — ${gpu}${spec.regions ? `, regions ${spec.regions.join(', ')}` : ''}${spec.maxPricePerHour !== undefined ? `, at most $${spec.maxPricePerHour}/h` : ''}${spec.ttlMs ? `, TTL ${Math.round(spec.ttlMs / 60_000)} min` : ''}`,
    });
    return { handle, started: true };
  }

  async status(name: string): Promise<VmStatus> {
    return this.handle(name).query(statusQuery);
  }

  /** Tear the VM down (also retries a leaked teardown at once). */
  async teardown(name: string): Promise<VmHandle> {
    return signalled(this.handle(name), teardownSignal);
  }

  /** Stop a launch in flight (it compensates what it created). */
  async cancel(name: string): Promise<VmHandle> {
    return signalled(this.handle(name), cancelSignal);
  }

  /** VMs known to this deployment, from visibility (search attributes); running ones unless `all`. */
  async list(opts: { all?: boolean } = {}): Promise<VmListing[]> {
    const query = `WorkflowType = 'vmWorkflow'${opts.all ? '' : ` AND ExecutionStatus = 'Running'`}`;
    const out: VmListing[] = [];
    for await (const wf of this.temporal.workflow.list({ query })) {
      const sa = wf.typedSearchAttributes;
      const name = sa.get(SA.vmName) ?? wf.workflowId.replace(/^vm-/, '');
      const row: VmListing = {
        name,
        workflowId: wf.workflowId,
        stage: sa.get(SA.stage) ?? 'pending',
        execution: wf.status.name,
        startedAt: wf.startTime.toISOString(),
      };
      const cloud = sa.get(SA.cloud);
      const region = sa.get(SA.region);
      const type = sa.get(SA.instanceType);
      if (cloud) row.cloud = cloud;
      if (region) row.region = region;
      if (type) row.instanceType = type;
      const rec = wf.memo?.[RECOVERY_MEMO] as RecoveryRecord | undefined;
      if (rec && typeof rec.count === 'number') row.recovered = { count: rec.count, lastLostAt: rec.lastLostAt, lastReason: rec.lastReason };
      out.push(row);
    }
    return out;
  }

  /** Stage changes of a VM until it settles (ready, failed, terminal), polling its status query. */
  async *watch(name: string, opts: { intervalMs?: number; until?: readonly Stage[] } = {}): AsyncGenerator<VmStatus> {
    const until = opts.until ?? ['ready', 'k8s-failed', 'failed', 'cancelled', 'terminated', 'lost'];
    let last = '';
    const h = this.handle(name);
    for (;;) {
      let s: VmStatus | undefined;
      try {
        s = await h.query(statusQuery);
      } catch (err) {
        // A closed workflow that failed before its first task can't be queried: read its end instead.
        const d = await h.describe();
        if (d.status.name !== 'RUNNING') throw err;
      }
      if (s) {
        const sig = `${s.stage}|${s.attempts.length}|${s.offer ? `${s.offer.cloud}/${s.offer.region}/${s.offer.instanceType}` : ''}`;
        if (sig !== last) {
          last = sig;
          yield s;
        }
        if (until.includes(s.stage)) return;
      }
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
    }
  }

  /** Every configured cloud's offers, computed on the worker (credentials stay there). */
  async offers(input: PlanInput): Promise<PlanOutput> {
    return this.temporal.workflow.execute<typeof offersWorkflow>('offersWorkflow', {
      workflowId: `offers-${randomUUID()}`,
      taskQueue: this.taskQueue,
      args: [input],
      staticSummary: 'list offers',
    });
  }

  /** The capacity blocks on sale for a query, computed on the worker. */
  async blockOfferings(input: BlockOfferingsInput): Promise<BlockOfferingsOutput> {
    return this.temporal.workflow.execute<typeof blockOfferingsWorkflow>('blockOfferingsWorkflow', {
      workflowId: `block-offerings-${randomUUID()}`,
      taskQueue: this.taskQueue,
      args: [input],
      staticSummary: 'list capacity block offerings',
    });
  }
}

/** Fleet operations on `fleet-<name>` workflows (see `GpuprovClient.fleet`). */
export class FleetClient {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  handle(name: string): FleetHandle {
    return this.temporal.workflow.getHandle<typeof fleetWorkflow>(fleetWorkflowId(name));
  }

  /**
   * Starts the fleet with `shape` (`started: true`), or applies `shape` to the running one (the
   * `applyShape` Update: a changed shape needs a higher generation; the same one again is a no-op,
   * `changed: false`).
   */
  async apply(shape: FleetShape, opts: Pick<FleetWorkflowInput, 'tuning' | 'vmTuning'> = {}): Promise<ApplyShapeResult & { started: boolean }> {
    let handle: FleetHandle;
    let started = true;
    try {
      handle = await this.temporal.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
        taskQueue: this.taskQueue,
        workflowId: fleetWorkflowId(shape.name),
        args: [{ shape, ...opts }],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        staticSummary: `fleet ${shape.name}`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      handle = this.handle(shape.name);
      started = false;
    }
    // A fresh fleet already has this shape (the update is then a no-op); a running one gets it now.
    return { ...(await handle.executeUpdate(applyShapeUpdate, { args: [shape] })), started };
  }

  async status(name: string): Promise<FleetStatus> {
    return this.handle(name).query(fleetStatusQuery);
  }

  /** Asks the fleet to delete every node and end; its `result()` is the final status. */
  async down(name: string): Promise<FleetHandle> {
    return signalled(this.handle(name), fleetTeardownSignal);
  }

  /** The node's slot (where its bootstrap log is: endpoint, host key, log path), if the fleet has it. */
  async node(fleet: string, node: string): Promise<SlotStatus | undefined> {
    return (await this.status(fleet)).slots.find((s) => s.slot === node);
  }
}
