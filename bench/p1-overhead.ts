/**
 * P1: the same launch on the local cloud (real sshd), by gpuprov's vmWorkflow and by a bare
 * script calling the same provider primitives directly, interleaved (ABBA) so that machine noise
 * hits both alike. The bare script is the best case: it looks again every BARE_LOOK_MS (no
 * polling schedule). With the product's schedule instead (250 ms between boot looks on the local
 * cloud) the comparison measured luck: a local sshd listens 30–50 ms after create, so whichever
 * side happened to look first after that won by 250 ms.
 */
import { startAttributes } from '../src/core/search-attributes';
import type { Client } from '@temporalio/client';
import { createOrAdopt } from '../src/activities/create-or-adopt';
import type { SshIdentity } from '../src/ssh';
import { sshProber } from '../src/ssh';
import type { LocalProvider } from '../src/providers/local';
import type { Capabilities, InstanceSpec, Location } from '../src/core/provider';
import { vmWorkflowId } from '../src/core/api';
import type { vmWorkflow } from '../src/workflows';
import { activitySteps, eventsOf, readyIndex, timeBreakdown, timeOf, type HistoryEvent } from './history';
import { percentile, sleep } from './stats';

export interface LaunchTiming {
  /** Start → Ready (SSH probe passed). */
  launchMs: number;
  /** The bare script's steps to Ready, ms: plan, prepare + create, boot (looks until Running), SSH probe. */
  steps?: { plan: number; create: number; boot: number; ssh: number };
  /** Teardown asked → instance gone and side resources cleaned. */
  teardownMs: number;
  totalMs: number;
}

export interface WorkflowRun extends LaunchTiming {
  events: HistoryEvent[];
  /** Epoch ms the client asked to start it. */
  startedAtMs: number;
}

/** The bare script's pause between looks (boot, SSH, gone). */
export const BARE_LOOK_MS = 10;

/** Look until `fn` resolves, every BARE_LOOK_MS. */
async function looking<T>(fn: () => Promise<T>, deadlineMs = 60_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() - start > deadlineMs) throw err;
      await sleep(BARE_LOOK_MS);
    }
  }
}

const userOf = (caps: Capabilities): string => (caps.sshUser.kind === 'fixed' ? caps.sshUser.user : 'root');

/** The bare script: plan → prepare → create → observe until Running → ssh probe → delete → observe until gone → cleanup. */
export async function bareLaunch(p: LocalProvider, ssh: SshIdentity, name: string): Promise<LaunchTiming> {
  const t0 = Date.now();
  const caps = p.capabilities();
  const offers = await p.plan({ vmName: name, k8s: false });
  const planned = Date.now();
  const offer = offers[0]!;
  const at: Location = { cloud: offer.cloud, region: offer.region };
  const spec: InstanceSpec = { vmName: name, owner: 'default', publicKeys: [ssh.publicKey], idempotencyKey: `bare-${name}/0`, openPorts: [22] };
  const prepared = await p.prepare(offer, spec);
  const { instanceId } = await createOrAdopt(p, offer, prepared, spec);
  const created = Date.now();
  const endpoint = await looking(async () => {
    const inst = (await p.observe(at, name)).find((o) => o.id === instanceId);
    if (inst?.status !== 'Running' || !inst.endpoint) throw new Error('not running yet');
    return inst.endpoint;
  });
  const running = Date.now();
  await looking(() => sshProber({ host: endpoint.host, port: endpoint.port, user: endpoint.user ?? userOf(caps) }, ssh, 10_000));
  const ready = Date.now();
  const steps = { plan: planned - t0, create: created - planned, boot: running - created, ssh: ready - running };
  await p.delete(at, name, [instanceId]);
  await looking(async () => {
    if ((await p.observe(at, name)).length > 0) throw new Error('still there');
  });
  await p.cleanup(at, name);
  const end = Date.now();
  return { launchMs: ready - t0, teardownMs: end - ready, totalMs: end - t0, steps };
}

/**
 * vmWorkflow with `ttlMs: 1`, so that Ready is followed at once by the teardown (a 1 ms timer
 * stands in for the user's `down`): start → ready upsert → timer fired → completed.
 */
export async function workflowLaunch(client: Client, taskQueue: string, name: string): Promise<WorkflowRun> {
  const t0 = Date.now();
  const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
    taskQueue,
    workflowId: `${vmWorkflowId(name)}-${t0}`,
    typedSearchAttributes: startAttributes(name),
    args: [{ spec: { name, clouds: ['local'], k8s: 'off', ttlMs: 1 } }],
  });
  const s = await h.result();
  const end = Date.now();
  if (s.stage !== 'terminated') throw new Error(`P1 workflow ${name} ended ${s.stage}`);
  const events = await eventsOf(h);
  const ri = readyIndex(events);
  const fired = events.find((e) => e.timerFiredEventAttributes);
  if (ri < 0 || !fired) throw new Error(`P1 workflow ${name}: no ready/timer event`);
  const ready = timeOf(events[ri]!);
  return { launchMs: ready - t0, teardownMs: end - timeOf(fired), totalMs: end - t0, events, startedAtMs: t0 };
}

/** One step to Ready: the workflow's median ms queued and running, and the bare script's median for the same step. */
export interface P1Step {
  queueMs: number;
  runMs: number;
  bareMs?: number;
}

const BARE_STEP: Record<string, keyof NonNullable<LaunchTiming['steps']>> = {
  planOffers: 'plan',
  prepareAndCreate: 'create',
  awaitRunning: 'boot',
  probeSsh: 'ssh',
};

/**
 * Where P1's time to Ready goes, by step: each activity's median queued and running ms beside the
 * bare script's median for the same step, the workflow tasks' (queued, running), and the start
 * (client call → the run's first event).
 */
export function p1Steps(wf: readonly WorkflowRun[], bare: readonly LaunchTiming[]): Record<string, P1Step> {
  const med = (xs: number[]): number => Math.round(percentile(xs, 50));
  const toReady = wf.map((w) => w.events.slice(0, readyIndex(w.events) + 1));
  const perRun = toReady.map((ev) => activitySteps(ev));
  const out: Record<string, P1Step> = {};
  for (const name of Object.keys(perRun[0] ?? {})) {
    const bareKey = BARE_STEP[name];
    const bareMs = bareKey ? bare.flatMap((b) => (b.steps ? [b.steps[bareKey]] : [])) : [];
    out[name] = {
      queueMs: med(perRun.map((r) => r[name]?.queueMs ?? 0)),
      runMs: med(perRun.map((r) => r[name]?.runMs ?? 0)),
      ...(bareMs.length ? { bareMs: med(bareMs) } : {}),
    };
  }
  const tasks = toReady.map((ev) => timeBreakdown(ev));
  out[`${tasks[0]?.workflowTasks ?? 0} workflow tasks`] = { queueMs: med(tasks.map((t) => t.wtQueueMs)), runMs: med(tasks.map((t) => t.wtRunMs)) };
  out['start (client → first event)'] = { queueMs: 0, runMs: med(wf.map((w) => timeOf(w.events[0]!) - w.startedAtMs)) };
  return out;
}
