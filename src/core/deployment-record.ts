/**
 * The deployment record: which deployment id and which worker SSH key the workers of one task
 * queue serve, kept by the Temporal server (the memo of `deploymentRecordWorkflow`, one per
 * namespace and task queue, ID `gpuprov-deployment:<task queue>`). A worker claims it before it
 * polls; the first claim makes it. Pure: the Temporal calls are in src/client/deployment-record.ts.
 *
 * | record      | claim's id   | claim's key  | open VMs | rotate key asked | decision                               |
 * |-------------|--------------|--------------|----------|------------------|----------------------------------------|
 * | none        | any          | any          | any      | any              | `create`                               |
 * | present     | same         | same         | any      | any              | `ok`                                   |
 * | present     | differs      | any          | some     | any              | `refuse` GPUPROV_DEPLOYMENT            |
 * | present     | same         | differs      | some     | any              | `refuse` GPUPROV_SSH_KEY_FILE          |
 * | present     | same         | differs      | none     | no               | `refuse` GPUPROV_SSH_KEY_FILE          |
 * | present     | differs      | any          | none     | any              | `replace` (the id changes)             |
 * | present     | same         | differs      | none     | yes              | `replace` (the key is rotated)         |
 *
 * Hazard: an id change with open VMs would leave them to an adapter that no longer sees their
 * instances (their teardown would find nothing and report them gone while they bill on); a
 * second key would fail every SSH step of the VMs the first key made.
 */

/** The record as the server keeps it (plain JSON; no secrets: the key's fingerprint only). */
export interface DeploymentRecord {
  /** The deployment id every adapter of these workers tags and matches. */
  deployment: string;
  /** `SHA256:…` of the worker SSH key every worker of the task queue must hold. */
  keyFingerprint: string;
  /** The task queue whose workers it binds. */
  taskQueue: string;
  /** ISO time the record was made (or last replaced). */
  since: string;
}

/** What a starting worker brings. */
export interface DeploymentClaim {
  deployment: string;
  keyFingerprint: string;
}

export type ClaimDecision =
  { decision: 'create' } | { decision: 'ok' } | { decision: 'replace'; reason: string } | { decision: 'refuse'; field: string; message: string; fix: string };

/** The variable that asks a worker to replace the recorded key when no VM is open. */
export const ROTATE_KEY_VAR = 'GPUPROV_ROTATE_SSH_KEY';

/** `gpuprov-deployment:<task queue>`: the one record of a task queue's workers in a namespace. */
export const deploymentRecordId = (taskQueue: string): string => `gpuprov-deployment:${taskQueue}`;

/** The decision table in this file's header. */
export function decideClaim(record: DeploymentRecord | undefined, claim: DeploymentClaim, openVms: number, rotateKey: boolean): ClaimDecision {
  if (!record) return { decision: 'create' };
  const sameId = record.deployment === claim.deployment;
  const sameKey = record.keyFingerprint === claim.keyFingerprint;
  if (sameId && sameKey) return { decision: 'ok' };
  const open = `${openVms} VM(s) of task queue ${record.taskQueue} are open`;
  if (!sameId) {
    if (openVms === 0) return { decision: 'replace', reason: `deployment id ${record.deployment} → ${claim.deployment} (no VM was open)` };
    return {
      decision: 'refuse',
      field: 'GPUPROV_DEPLOYMENT',
      message: `this worker is deployment ${claim.deployment}, but ${open} under deployment ${record.deployment} (recorded ${record.since}); their instances carry that id, so a worker of another id would lose sight of them`,
      fix: `run this worker with GPUPROV_DEPLOYMENT=${record.deployment}, or take the open VMs down first (npx provision list; npx provision down NAME)`,
    };
  }
  if (openVms === 0 && rotateKey)
    return { decision: 'replace', reason: `worker key ${record.keyFingerprint} → ${claim.keyFingerprint} (${ROTATE_KEY_VAR}=1, no VM was open)` };
  return {
    decision: 'refuse',
    field: 'GPUPROV_SSH_KEY_FILE',
    message: `this worker's SSH key ${claim.keyFingerprint} is not deployment ${record.deployment}'s key ${record.keyFingerprint} (recorded ${record.since}); it could not reach the VMs the other workers make`,
    fix:
      openVms > 0
        ? `give this worker the deployment key (GPUPROV_SSH_KEY_FILE or GPUPROV_SSH_PRIVATE_KEY, the same file every worker has)`
        : `give this worker the deployment key (GPUPROV_SSH_KEY_FILE, the same file every worker has), or rotate it: stop every worker and start one with ${ROTATE_KEY_VAR}=1`,
  };
}
