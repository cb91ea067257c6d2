/**
 * The embedded default's deployment id: its own, made once and kept in its state directory, so
 * that two laptops running the embedded default against one cloud account never share one by
 * accident (each would take the other's instances for its own). An install from before the id
 * existed keeps the namespace's id while it has open VMs (their instances carry it).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Client } from '@temporalio/client';
import { openVms, readDeploymentRecord } from '../client/deployment-record';
import { deploymentFromEnv, deploymentProblem } from '../providers/deployment';

/** Where the id is kept. */
export const deploymentIdFile = (stateDir: string): string => join(stateDir, 'deployment-id');

/** A new id: `dev-` and ten hex digits (40 random bits). */
export function mintDeploymentId(): string {
  return `dev-${randomBytes(5).toString('hex')}`;
}

async function readId(file: string): Promise<string | undefined> {
  try {
    const id = (await readFile(file, 'utf8')).trim();
    return id && !deploymentProblem(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The id of the embedded default whose state is `stateDir`: the kept one; else the server's
 * record (the file was lost); else the namespace's while VMs from before are open; else a new one.
 * Written to the state directory before it is returned.
 */
export async function embeddedDeploymentId(stateDir: string, client: Client, taskQueue: string, namespace: string): Promise<string> {
  const file = deploymentIdFile(stateDir);
  const kept = await readId(file);
  if (kept) return kept;
  const record = await readDeploymentRecord(client, taskQueue);
  let id = record?.deployment;
  id ??= (await openVms(client, taskQueue)) > 0 ? deploymentFromEnv({}, namespace) : mintDeploymentId();
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${id}\n`, { mode: 0o600 });
  return id;
}
