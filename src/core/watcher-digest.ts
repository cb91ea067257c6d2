/**
 * One look of the account watcher, digested where it is taken (the `watchCycle` activity), pure.
 * The region's whole view (every instance and every open VM, ~0.4 KB a VM) never reaches the
 * watcher's history: the digest carries what needs a decision and counts, and the signature the
 * long poll compares is a short hash of the view taken in the activity.
 *
 * | in the view                                                    | in the digest                                    |
 * |----------------------------------------------------------------|--------------------------------------------------|
 * | an instance or side resource of a name an open VM owns         | counted only (`owned`: no decision)              |
 * | an instance or side resource of a name no open VM owns         | `unowned`: name, ids with create keys, sides     |
 * | an owner placed here in `ready`/`k8s-failed`, no alive instance | `lost`: workflow, name, ids still listed, cause  |
 * | such an owner whose alive instances all carry a `preemption`   | `lost` at once, cause `preempted` (notice, deadline) |
 * | such an owner with an alive instance without one (a replacement) | alive: no row                                  |
 * | an owner placed here in another stage, no alive instance       | counted in `settling` (its own workflow acts)    |
 * | an owner open elsewhere (another region, cloud, task queue)    | owns its name here; never lost from here         |
 * | the owners' stages                                             | `cadence` (src/core/watcher.ts)                  |
 * | a ledger name the workflow asked about (`expiring`)            | in `present` when listed or owned                |
 * | a ledger page's name the look asked about                      | not here: `presentIn` answers the page itself    |
 *
 * The ledger (src/core/watcher-ledger.ts) is refreshed through `present`: the workflow asks only
 * about names it has not seen for half `ledgerKeepMs` (at most `EXPIRING_ASKED` a cycle), so
 * neither the question nor the answer grows with the fleet.
 */
import { lossCauseOf, preemptedCauseOf } from './loss';
import type { Owned, SideResource } from './provider';
import { ALIVE, UP_STAGES, cadenceOf, type CycleView, type OrphanSeen, type OwnerVm, type UnownedName, type ViewDigest } from './watcher';

function groupBy<T extends { vmName: string }>(xs: readonly T[] | undefined): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs ?? []) {
    const list = out.get(x.vmName);
    if (list) list.push(x);
    else out.set(x.vmName, [x]);
  }
  return out;
}

function unownedOf(vmName: string, instances: readonly Owned[], sides: readonly SideResource[] | undefined): UnownedName {
  const ids = [...instances]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((o) => ({ id: o.id, ...(o.createKey !== undefined ? { createKey: o.createKey } : {}) }));
  const side = sides?.map((r) => `${r.kind}:${r.id}`).sort();
  return { vmName, instances: ids, ...(side?.length ? { sideResources: side } : {}) };
}

/** The digest of one look; `expiring` are the ledger names the workflow asks about, `spot` those it recorded as spot creates. */
export function digestOf(view: CycleView, expiring: readonly string[] = [], spot: readonly string[] = []): ViewDigest {
  const byName = groupBy(view.instances);
  const sides = groupBy(view.sides);
  const owners = groupBy<OwnerVm>(view.owners);
  const unowned: UnownedName[] = [];
  for (const vmName of new Set([...byName.keys(), ...sides.keys()])) {
    if (!owners.has(vmName)) unowned.push(unownedOf(vmName, byName.get(vmName) ?? [], sides.get(vmName)));
  }
  const lost: ViewDigest['lost'] = [];
  let settling = 0;
  for (const [vmName, own] of owners) {
    const seen = byName.get(vmName) ?? [];
    // A preempted instance still runs but is lost already; a replacement beside it is not.
    if (seen.some((o) => ALIVE.has(o.status) && !o.preemption)) continue;
    const preempted = preemptedCauseOf(seen);
    for (const owner of own) {
      if (owner.elsewhere) continue;
      if (!UP_STAGES.has(owner.stage)) settling += 1;
      else lost.push({ vmName, workflowId: owner.workflowId, instanceIds: seen.map((o) => o.id).sort(), cause: preempted ?? lossCauseOf(seen) });
    }
  }
  const present = expiring.filter((n) => byName.has(n) || sides.has(n) || owners.has(n));
  return { instances: view.instances.length, owners: view.owners.length, unowned, lost, settling, cadence: cadenceOf(view.owners, new Set(spot)), present };
}

/** Of `names`, those this view lists (instance or side resource) or sees owned: what a look tells the ledger pages it asked. */
export function presentIn(view: CycleView, names: readonly string[]): string[] {
  if (names.length === 0) return [];
  const here = new Set([...view.instances.map((i) => i.vmName), ...(view.sides ?? []).map((r) => r.vmName), ...view.owners.map((o) => o.vmName)]);
  return names.filter((n) => here.has(n));
}

/**
 * What a cycle's view looks like, for "did anything change": owners with their stages and
 * instances with their statuses, sorted. The activity hashes it; a long-polling cycle returns as
 * soon as the hash differs.
 */
export function viewSignature(view: CycleView): string {
  const owners = view.owners.map((o) => `${o.workflowId}=${o.stage}`).sort();
  // A notice changes the view (`!p`): the long poll returns at once, the instance still Running.
  const instances = view.instances.map((i) => `${i.vmName}/${i.id}=${i.status}${i.preemption ? '!p' : ''}`).sort();
  if (!view.sides?.length) return JSON.stringify([owners, instances]);
  return JSON.stringify([owners, instances, view.sides.map((r) => `${r.vmName}/${r.kind}:${r.id}`).sort()]);
}

/** The orphans the workflow knows that this digest still shows unowned and whose grace is over (or every one, `sweepNow`). */
export function dueIn(digest: ViewDigest, known: readonly OrphanSeen[], nowMs: number, graceMs: number): OrphanSeen[] {
  const unowned = new Set(digest.unowned.map((u) => u.vmName));
  return known.filter((o) => unowned.has(o.vmName) && nowMs - o.firstSeenAtMs >= graceMs);
}

/**
 * Whether a look inside a long-polling cycle must be handed to the workflow now: the view changed
 * (a loss shows as a change: the instance vanished or failed), or a known orphan is due. A loss is
 * not a reason by itself: the workflow told the VM when the change came in, and telling it again
 * every look would only repeat the signal while visibility still shows it Ready.
 */
export function cycleMustReturn(due: number, signature: string, lastSignature: string | undefined): boolean {
  return due > 0 || signature !== lastSignature;
}
