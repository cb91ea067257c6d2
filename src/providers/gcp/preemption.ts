/**
 * Spot preemption as Compute Engine's API shows it, pure. Facts relied on:
 *
 * - A preemption is recorded as a zone operation of type `compute.instances.preempted` whose
 *   target is the instance (`targetId`, `targetLink`); Google's own sample lists them with
 *   `zoneOperations.list` and the filter `operationType="compute.instances.preempted"`
 *   (https://cloud.google.com/compute/docs/samples/compute-preemptible-history,
 *   https://cloud.google.com/compute/docs/instances/create-use-spot). The
 *   aggregated form (`globalOperations.aggregatedList`, same filter) lists every zone's in one
 *   paged call.
 * - Compute Engine sends the guest an ACPI G2 soft off and, by default, 30 seconds later a G3
 *   mechanical off for Spot VMs (the Discovery document's `Scheduling.skipGuestOsShutdown`, which
 *   we never set), then stops or deletes the instance per `instanceTerminationAction`. The API
 *   gives no earlier sign than the operation (the guest's metadata server does, not the API), so
 *   noticeAt = the operation's `insertTime`, deadline = noticeAt + {@link SPOT_SHUTDOWN_MS}.
 * - With `DELETE` (what gpuprov asks, src/providers/gcp/map.ts) the instance is gone soon after;
 *   only the operation is left. The inventory reports such an instance, deleted on preemption,
 *   for {@link GONE_SHOWN_MS} after the notice, so the account watcher calls the loss `preempted`
 *   rather than `vanished`. `observe` never does: a release waits for `observe` to list nothing.
 *
 * | what the API shows                                    | what we report                                  |
 * |-------------------------------------------------------|-------------------------------------------------|
 * | a listed instance, with a preempted op of its id      | the instance as listed, with `preemption`       |
 * | a preempted op of one of our names, instance not listed, op younger than GONE_SHOWN_MS | (inventory only) a `Terminating` instance of that id, with `preemption` |
 * | anything else                                         | nothing more                                    |
 */
import type { Observed, Owned, Preemption } from '../../core/provider';
import { vmNameOfOwnedName } from '../deployment';

/** The operation type Compute Engine records a preemption under. */
export const PREEMPTED_OPERATION = 'compute.instances.preempted';
/** The Compute list filter that selects preemptions. */
export const PREEMPTED_FILTER = `operationType = "${PREEMPTED_OPERATION}"`;
/** From the ACPI G2 soft off to the G3 mechanical off of a Spot VM (`Scheduling.skipGuestOsShutdown` unset). */
export const SPOT_SHUTDOWN_MS = 30_000;
/** How long after its notice the inventory still reports an instance deleted on preemption. */
export const GONE_SHOWN_MS = 10 * 60_000;

/** What we read of a `compute.instances.preempted` operation. */
export interface PreemptedOp {
  zone: string;
  targetId?: string | null | undefined;
  targetLink?: string | null | undefined;
  insertTime?: string | null | undefined;
  status?: string | null | undefined;
  statusMessage?: string | null | undefined;
}

function iso(t: string | null | undefined): string | undefined {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** The operation as a {@link Preemption}; undefined without a readable `insertTime`. */
export function preemptionOf(op: PreemptedOp): Preemption | undefined {
  const noticeAt = iso(op.insertTime);
  if (!noticeAt) return undefined;
  const words = [PREEMPTED_OPERATION, op.status, op.statusMessage].filter((w): w is string => !!w);
  return { noticeAt, deadline: new Date(Date.parse(noticeAt) + SPOT_SHUTDOWN_MS).toISOString(), detail: words.join(': ') };
}

/** The newest preemption of each instance id. */
function byTarget(ops: readonly PreemptedOp[]): Map<string, { op: PreemptedOp; p: Preemption }> {
  const out = new Map<string, { op: PreemptedOp; p: Preemption }>();
  for (const op of ops) {
    const p = op.targetId ? preemptionOf(op) : undefined;
    const seen = op.targetId ? out.get(op.targetId) : undefined;
    if (p && (!seen || seen.p.noticeAt < p.noticeAt)) out.set(op.targetId!, { op, p });
  }
  return out;
}

/** Listed instances with `preemption` set where an operation names their id. */
export function withPreemptions<T extends Observed>(listed: readonly T[], ops: readonly PreemptedOp[]): T[] {
  const found = byTarget(ops);
  return listed.map((o) => {
    const hit = found.get(o.id);
    return hit ? { ...o, preemption: hit.p } : o;
  });
}

/**
 * This deployment's instances deleted on preemption (not in `listedIds`) whose notice is younger
 * than {@link GONE_SHOWN_MS} at `nowMs`, in `zones`, as `Terminating` instances.
 */
export function deletedOnPreemption(
  ops: readonly PreemptedOp[],
  listedIds: ReadonlySet<string>,
  inZone: (zone: string) => boolean,
  region: string,
  deployment: string,
  nowMs: number,
): Owned[] {
  const out: Owned[] = [];
  for (const [id, { op, p }] of byTarget(ops)) {
    const name = op.targetLink?.slice(op.targetLink.lastIndexOf('/') + 1);
    const vmName = vmNameOfOwnedName(name, deployment);
    if (listedIds.has(id) || !vmName || !inZone(op.zone) || nowMs - Date.parse(p.noticeAt) > GONE_SHOWN_MS) continue;
    out.push({
      id,
      vmName,
      status: 'Terminating',
      reason: `deleted on preemption (${p.detail ?? PREEMPTED_OPERATION})`,
      location: { cloud: 'gcp', region, zone: op.zone },
      preemption: p,
    });
  }
  return out;
}
