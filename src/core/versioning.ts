/**
 * Worker Versioning (Temporal Worker Deployments): which workflow types stay on the version that
 * started them (PINNED) and which move to the current version (AUTO_UPGRADE), whether a worker
 * process runs as a Worker Deployment Version, and its build id. Pure; read by the workflows
 * (`src/workflows/versioning.ts` declares each type's behaviour) and the worker
 * (`src/server/worker-versioning.ts`).
 *
 * | workflow type            | behaviour    | why                                                                              |
 * |--------------------------|--------------|----------------------------------------------------------------------------------|
 * | vmWorkflow               | PINNED       | a launch and a teardown create and delete billed things step by step: they end on |
 * |                          |              | the code that began them; a Ready VM moves at its next continue-as-new (history   |
 * |                          |              | growth, `--recover` relaunch), which starts on the current version               |
 * | launchWorkflow           | PINNED       | as vmWorkflow's launch (children of older fleets)                                |
 * | teardownWorkflow         | PINNED       | as vmWorkflow's teardown                                                         |
 * | offersWorkflow           | PINNED       | seconds long                                                                     |
 * | blockOfferingsWorkflow   | PINNED       | seconds long                                                                     |
 * | fleetWorkflow            | AUTO_UPGRADE | lives as long as the fleet and may sleep for days once converged: pinned, it      |
 * |                          |              | would hold its version forever; its command changes need a patch ("Patches")     |
 * | accountWatcherWorkflow   | AUTO_UPGRADE | never ends; command changes need a patch                                         |
 * | capacityMemoryWorkflow   | AUTO_UPGRADE | an entity fed by every launch; command changes need a patch                      |
 * | ledgerPageWorkflow       | AUTO_UPGRADE | an entity fed by every create; makes no command but continue-as-new              |
 * | deploymentRecordWorkflow | AUTO_UPGRADE | makes no command after its first task and never ends                             |
 *
 * Versioning is on when GPUPROV_WORKER_VERSIONING is `1` (off: unset, empty or `0`; anything else
 * is bad input). The deployment name is GPUPROV_WORKER_DEPLOYMENT_NAME, default the task queue.
 * The build id is `<package version>-<first 12 hex digits of the workflow bundle's sha256>`:
 * a code change makes a new version, a rebuild of the same code does not.
 */
import type { VersioningBehavior } from '@temporalio/common';
import { InputError } from './errors';

/** Every workflow type the worker registers (src/workflows/index.ts), with its versioning behaviour. */
export const WORKFLOW_VERSIONING = {
  vmWorkflow: 'PINNED',
  launchWorkflow: 'PINNED',
  teardownWorkflow: 'PINNED',
  offersWorkflow: 'PINNED',
  blockOfferingsWorkflow: 'PINNED',
  fleetWorkflow: 'AUTO_UPGRADE',
  accountWatcherWorkflow: 'AUTO_UPGRADE',
  capacityMemoryWorkflow: 'AUTO_UPGRADE',
  ledgerPageWorkflow: 'AUTO_UPGRADE',
  deploymentRecordWorkflow: 'AUTO_UPGRADE',
} as const satisfies Record<string, VersioningBehavior>;

export type WorkflowTypeName = keyof typeof WORKFLOW_VERSIONING;

/**
 * The behaviour a run declares: its type's row on a versioned worker, none on an unversioned one
 * (which must not send one; src/workflows/versioning.ts says why).
 */
export function declaredBehavior(type: WorkflowTypeName, versionedWorker: boolean): VersioningBehavior | undefined {
  return versionedWorker ? WORKFLOW_VERSIONING[type] : undefined;
}

/** The worker's default for a type the table lacks (none today): PINNED, the safe one. */
export const DEFAULT_VERSIONING_BEHAVIOR: VersioningBehavior = 'PINNED';

export const VERSIONING_VAR = 'GPUPROV_WORKER_VERSIONING';
export const DEPLOYMENT_NAME_VAR = 'GPUPROV_WORKER_DEPLOYMENT_NAME';

/** Hex digits of the bundle's sha256 in a build id. */
export const BUILD_ID_HASH_DIGITS = 12;

/** A deployment name the server accepts and `temporal worker deployment` commands take unquoted. */
const DEPLOYMENT_NAME = /^[A-Za-z0-9_-]{1,200}$/;

/** Off, or on with the deployment name. */
export type VersioningSetting = { on: false } | { on: true; deploymentName: string };

/**
 * Whether this worker runs as a Worker Deployment Version, from the environment. Bad values are
 * an InputError (exit 2) naming the variable and the fix.
 */
export function versioningSetting(env: NodeJS.ProcessEnv, taskQueue: string): VersioningSetting {
  const flag = env[VERSIONING_VAR] ?? '';
  if (flag === '' || flag === '0') {
    if (env[DEPLOYMENT_NAME_VAR])
      throw new InputError(DEPLOYMENT_NAME_VAR, 'is set but worker versioning is off', `set ${VERSIONING_VAR}=1 as well, or unset ${DEPLOYMENT_NAME_VAR}`);
    return { on: false };
  }
  if (flag !== '1')
    throw new InputError(VERSIONING_VAR, `must be 1 or 0, not ${JSON.stringify(flag)}`, `${VERSIONING_VAR}=1 runs the worker as a Worker Deployment Version`);
  const deploymentName = env[DEPLOYMENT_NAME_VAR] || taskQueue;
  if (!DEPLOYMENT_NAME.test(deploymentName))
    throw new InputError(
      env[DEPLOYMENT_NAME_VAR] ? DEPLOYMENT_NAME_VAR : 'GPUPROV_TASK_QUEUE',
      `${JSON.stringify(deploymentName)} is not a deployment name (letters, digits, '-' and '_'; no '.')`,
      `set ${DEPLOYMENT_NAME_VAR} to e.g. gpuprov`,
    );
  return { on: true, deploymentName };
}

/** `<package version>-<first BUILD_ID_HASH_DIGITS of the bundle's sha256>`. */
export function buildIdOf(packageVersion: string, bundleSha256Hex: string): string {
  if (!/^[0-9a-f]{64}$/.test(bundleSha256Hex)) throw new Error(`buildIdOf: not a sha256 in hex: ${bundleSha256Hex}`);
  return `${packageVersion}-${bundleSha256Hex.slice(0, BUILD_ID_HASH_DIGITS)}`;
}
