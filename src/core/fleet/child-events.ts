/**
 * What a fleet hears from its children, as fleet events: the `slotEvent` signal of a child
 * vmWorkflow mapped to the attempt its attempt-scoped workflow ID names. Pure.
 */
import type { SlotEvent } from '../fleet-api';
import type { FleetEvent } from './state';

/** `vm-<slot>-a<attempt>` → slot and attempt. */
export function parseAttemptId(id: string): { slot: string; attempt: number } | undefined {
  const m = /^vm-(.+)-a(\d+)$/.exec(id);
  return m ? { slot: m[1]!, attempt: Number(m[2]) } : undefined;
}

/**
 * A child's report as a fleet event (`ready`, `k8s-failed` and the terminal stages; nothing
 * else). A reported end is not a close: the child is still open until its completion arrives.
 */
export function eventOfChild(e: SlotEvent): FleetEvent | undefined {
  const id = parseAttemptId(e.workflowId);
  if (!id) return undefined;
  const vmFacts = {
    ...(e.endpoint ? { endpoint: e.endpoint } : {}),
    ...(e.hostKey ? { hostKey: e.hostKey } : {}),
    ...(e.workerKeyFingerprint ? { workerKeyFingerprint: e.workerKeyFingerprint } : {}),
  };
  if (e.stage === 'ready' && e.endpoint) return { type: 'vmReady', ...id, ...vmFacts, endpoint: e.endpoint };
  if (e.stage === 'failed' || e.stage === 'lost' || e.stage === 'terminated' || e.stage === 'cancelled') {
    return {
      type: 'vmEnded',
      ...id,
      outcome: e.stage,
      ...(e.error ? { reason: `${e.error.kind}: ${e.error.message}` } : e.budgetReached ? { reason: 'its spend reached the budget' } : {}),
      ...(e.budgetReached ? { budgetReached: true } : {}),
      closed: false,
    };
  }
  if (e.stage === 'k8s-failed') {
    return { type: 'vmK8sFailed', ...id, ...vmFacts, reason: e.error ? `k3s failed: ${e.error.message}` : 'k3s failed' };
  }
  return undefined;
}

/** The log line of an observation. */
export function noteOf(e: FleetEvent): string {
  switch (e.type) {
    case 'vmEnded':
      return `vm ${e.outcome}${e.closed ? ' (closed)' : ''}`;
    case 'vmK8sFailed':
      return `vm k8s-failed: ${e.reason}`;
    case 'bootDone':
      return `bootstrap ${e.stage}`;
    case 'opFailed':
      return `${e.op} failed: ${e.reason}`;
    default:
      return e.type;
  }
}
