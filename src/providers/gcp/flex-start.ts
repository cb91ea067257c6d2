/**
 * GCP flex-start VMs (Dynamic Workload Scheduler) as queued offers (`--queue [--wait D]`): one
 * `instances.insert` in Compute v1 (no beta API, no managed instance group) whose instance waits
 * in status PENDING until Compute finds the capacity, then boots like any other; if it finds none
 * within the request's validity, Compute deletes the instance
 * (https://cloud.google.com/compute/docs/instances/instance-lifecycle, "PENDING").
 *
 * The insert (the Discovery document's `Instance`, `Scheduling`, `InstanceParams`):
 * | field                                  | value                                                             |
 * |----------------------------------------|-------------------------------------------------------------------|
 * | `scheduling.provisioningModel`          | `FLEX_START`                                                      |
 * | `scheduling.maxRunDuration`             | 7 days, the longest a flex-start VM may run (Compute ends it then) |
 * | `scheduling.instanceTerminationAction`  | `DELETE`: at the end of its run nothing is left to bill           |
 * | `scheduling.onHostMaintenance`, `automaticRestart` | `TERMINATE`, false                                     |
 * | `params.requestValidForDuration`        | the ask's wait in whole seconds, rounded up, plus {@link MARGIN_S}, within 90 s–2 h (a shorter validity does not queue: no PENDING) |
 * | `reservationAffinity`                  | `NO_RESERVATION`: a flex-start VM cannot consume a reservation     |
 *
 * Which types: flex-start serves the accelerator-optimized families (A2, A3, A4, G2; not A4X), so
 * the N1 types with attached GPUs get no queued offer. A queued offer is the on-demand offer's
 * twin with `queued: true`; its price is the on-demand one, an upper bound (flex-start bills its
 * own, discounted SKUs, which the price ladder does not read). Flex-start VMs count against the
 * preemptible quotas (./map.ts `quotaShortfallsOf`).
 */
import { ProviderError } from '../../core/errors';
import type { Offer } from '../../core/provider';

/** The validity bounds of a queued request, in seconds. */
export const MIN_VALID_S = 90;
export const MAX_VALID_S = 2 * 3600;
/**
 * Added to the wait so the workflow's wait (from after the insert) ends first: its timeout is a
 * Capacity answer and deletes the still PENDING instance, where Compute deleting it first would
 * read as an instance vanished while booting.
 */
export const MARGIN_S = 120;
/** The longest a flex-start VM runs. */
export const MAX_RUN_S = 7 * 24 * 3600;

const FLEX_FAMILY = /^(a2|a3|a4|g2)-/;

/** Does flex-start serve this machine type? */
export function flexStartable(machineType: string): boolean {
  return FLEX_FAMILY.test(machineType) && !machineType.startsWith('a4x-');
}

/** The request's validity for a wait of `waitMs`: whole seconds, rounded up, plus {@link MARGIN_S}, within {@link MIN_VALID_S}–{@link MAX_VALID_S}. */
export function validForSeconds(waitMs: number): number {
  return Math.min(MAX_VALID_S, Math.max(MIN_VALID_S, Math.ceil(waitMs / 1000) + MARGIN_S));
}

/**
 * `offers` with the queued twin of each on-demand offer flex-start can serve, placed before it
 * (the twin carries its validity in `extra.flexValidSeconds`).
 */
export function withQueued(offers: readonly Offer[], waitMs: number): Offer[] {
  const validFor = validForSeconds(waitMs);
  return offers.flatMap((o) => {
    if ((o.market ?? 'on-demand') !== 'on-demand' || !flexStartable(o.instanceType)) return [o];
    const extra = (o.extra ?? {}) as Record<string, unknown>;
    return [{ ...o, queued: true, extra: { ...extra, flexValidSeconds: validFor } }, o];
  });
}

/** The insert fields of a queued offer (the header's table), overriding the ordinary scheduling; nothing for other offers. */
export function flexStartFields(offer: Offer): Record<string, unknown> {
  if (!offer.queued) return {};
  const valid = (offer.extra as { flexValidSeconds?: unknown } | undefined)?.flexValidSeconds;
  if (!flexStartable(offer.instanceType) || typeof valid !== 'number') {
    throw new ProviderError('InvalidRequest', `gcp: ${offer.instanceType} cannot be queued (flex-start serves A2, A3, A4 and G2 types)`);
  }
  return {
    scheduling: {
      provisioningModel: 'FLEX_START',
      maxRunDuration: { seconds: String(MAX_RUN_S) },
      instanceTerminationAction: 'DELETE',
      onHostMaintenance: 'TERMINATE',
      automaticRestart: false,
    },
    params: { requestValidForDuration: { seconds: String(valid) } },
    reservationAffinity: { consumeReservationType: 'NO_RESERVATION' },
  };
}
