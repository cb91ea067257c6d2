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
import { eventsOf, readyIndex, timeOf, type HistoryEvent } from './history';
import { sleep } from './stats';

export interface LaunchTiming {
  /** Start → Ready (SSH probe passed). */
  launchMs: number;
  /** Teardown asked → instance gone and side resources cleaned. */
  teardownMs: number;
  totalMs: number;
}

export interface WorkflowRun extends LaunchTiming {
  events: HistoryEvent[];
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
  const offer = offers[0]!;
  const at: Location = { cloud: offer.cloud, region: offer.region };
  const spec: InstanceSpec = { vmName: name, owner: 'default', publicKeys: [ssh.publicKey], idempotencyKey: `bare-${name}/0`, openPorts: [22] };
  const prepared = await p.prepare(offer, spec);
  const { instanceId } = await createOrAdopt(p, offer, prepared, spec);
  const endpoint = await looking(async () => {
    const inst = (await p.observe(at, name)).find((o) => o.id === instanceId);
    if (inst?.status !== 'Running' || !inst.endpoint) throw new Error('not running yet');
    return inst.endpoint;
  });
  await looking(() => sshProber({ host: endpoint.host, port: endpoint.port, user: endpoint.user ?? userOf(caps) }, ssh, 10_000));
  const ready = Date.now();
  await p.delete(at, name, [instanceId]);
  await looking(async () => {
    if ((await p.observe(at, name)).length > 0) throw new Error('still there');
  });
  await p.cleanup(at, name);
  const end = Date.now();
  return { launchMs: ready - t0, teardownMs: end - ready, totalMs: end - t0 };
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
  return { launchMs: ready - t0, teardownMs: end - timeOf(fired), totalMs: end - t0, events };
}
