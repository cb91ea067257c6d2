/**
 * GpuprovClient: the typed library over `@temporalio/client` that the CLI uses and other services
 * may use. Workflow names, inputs and messages are the public API of `src/workflows/api.ts`.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { PlanInput, PlanOutput } from '../activities';
import { cancelSignal, retryK8sSignal, statusQuery, TASK_QUEUE, teardownSignal, vmWorkflowId, type Stage, type VmSpec, type VmStatus } from '../core/api';
import { SA } from '../core/search-attributes';
import type { Tuning } from '../core/tuning';

export interface StartResult {
  handle: WorkflowHandle;
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
}

export class GpuprovClient {
  constructor(
    readonly temporal: Client,
    readonly taskQueue: string = TASK_QUEUE,
  ) {}

  private handle(name: string): WorkflowHandle {
    return this.temporal.workflow.getHandle(vmWorkflowId(name));
  }

  /** Start the VM's workflow, or attach to the one already running for this name. */
  async start(spec: VmSpec, tuning?: Partial<Tuning>): Promise<StartResult> {
    const id = vmWorkflowId(spec.name);
    try {
      const d = await this.temporal.workflow.getHandle(id).describe();
      if (d.status.name === 'RUNNING') {
        const handle = this.temporal.workflow.getHandle(id);
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
    const handle = await this.temporal.workflow.start('vmWorkflow', {
      workflowId: id,
      taskQueue: this.taskQueue,
      args: [{ spec, ...(tuning ? { tuning } : {}) }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [
        { key: SA.vmName, value: spec.name },
        { key: SA.stage, value: 'pending' },
      ],
      staticSummary: `VM ${spec.name}: ${gpu} on ${spec.clouds?.join(', ') ?? 'any configured cloud'}`,
      staticDetails: `gpuprov VM **${spec.name}** — ${gpu}${spec.regions ? `, regions ${spec.regions.join(', ')}` : ''}${spec.maxPricePerHour !== undefined ? `, at most $${spec.maxPricePerHour}/h` : ''}${spec.ttlMs ? `, TTL ${Math.round(spec.ttlMs / 60_000)} min` : ''}`,
    });
    return { handle, started: true };
  }

  async status(name: string): Promise<VmStatus> {
    return this.handle(name).query(statusQuery);
  }

  /** Tear the VM down (also retries a leaked teardown at once). */
  async teardown(name: string): Promise<WorkflowHandle> {
    const h = this.handle(name);
    await h.signal(teardownSignal);
    return h;
  }

  /** Stop a launch in flight (it compensates what it created). */
  async cancel(name: string): Promise<WorkflowHandle> {
    const h = this.handle(name);
    await h.signal(cancelSignal);
    return h;
  }

  /** VMs known to this deployment, from visibility (search attributes); running ones unless `all`. */
  async list(opts: { all?: boolean } = {}): Promise<VmListing[]> {
    const query = `WorkflowType = 'vmWorkflow'${opts.all ? '' : ` AND ExecutionStatus = 'Running'`}`;
    const out: VmListing[] = [];
    for await (const wf of this.temporal.workflow.list({ query })) {
      const sa = wf.typedSearchAttributes;
      const name = sa.get(SA.vmName) ?? wf.workflowId.replace(/^vm-/, '');
      const row: VmListing = { name, workflowId: wf.workflowId, stage: sa.get(SA.stage) ?? 'pending', execution: wf.status.name, startedAt: wf.startTime.toISOString() };
      const cloud = sa.get(SA.cloud);
      const region = sa.get(SA.region);
      const type = sa.get(SA.instanceType);
      if (cloud) row.cloud = cloud;
      if (region) row.region = region;
      if (type) row.instanceType = type;
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
    return this.temporal.workflow.execute('offersWorkflow', { workflowId: `offers-${randomUUID()}`, taskQueue: this.taskQueue, args: [input], staticSummary: 'list offers' });
  }
}
