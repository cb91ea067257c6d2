/** What the cluster suite watches from outside: a VM's stage and whether its create is still pending. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { statusQuery, vmWorkflowId, type Stage } from '../../src/core/api';

/** The activities that create an instance (current and pre-patch). */
const CREATE_ACTIVITIES = ['prepareAndCreate', 'createInstance'];

/** Polls `probe` every `everyMs` until it returns a value (not undefined); bounded. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

/** The VM's stage by its status query; undefined while the server or every worker is away. */
export async function stageOf(client: Client, name: string): Promise<Stage | undefined> {
  try {
    return (await client.workflow.getHandle(vmWorkflowId(name)).query(statusQuery)).stage;
  } catch {
    return undefined;
  }
}

/**
 * True while the VM's workflow has a create activity pending (scheduled, running or waiting for
 * its retry); false once none is; undefined when the server cannot tell yet.
 */
export async function createPending(client: Client, name: string): Promise<boolean | undefined> {
  try {
    const d = await client.workflow.getHandle(vmWorkflowId(name)).describe();
    return (d.raw.pendingActivities ?? []).some((a) => CREATE_ACTIVITIES.includes(a.activityType?.name ?? ''));
  } catch {
    return undefined;
  }
}

/** Milliseconds as seconds with one decimal, for printed figures. */
export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
