/**
 * The oracle's invariants on what the account watcher and the deployment identity promise
 * (issues 16, 26): orphans of terminated workflows are swept within the grace, a deployment never
 * touches another's resources, independent installs sharing one cloud never delete, adopt or
 * report lost each other's instances, and a Ready VM whose instance vanished is `lost` within one
 * fast watcher cycle.
 */
import type { VmStatus } from '../../src/core/api';
import type { Evidence, Invariant, Violation } from './evidence';
import { closeOf, v } from './runs';

/** Beyond one fast watcher cycle: the watcher's workflow task, its signal and the VM's stage upsert on a loaded machine. */
export const LOST_ALLOWANCE_MS = 10_000;
/** A worker SIGKILL or a server restart can hold a watcher's cycle up to its heartbeat timeout (~1 minute). */
export const DISRUPTION_ALLOWANCE_MS = 70_000;

/** Per vanished VM: ms from the vanish to its `lost` stage (undefined: never lost). */
export function lostDelays(ev: Evidence): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {};
  for (const [key, at] of Object.entries(ev.vanishedAt ?? {})) {
    const lostAt = ev.runs
      .filter((r) => r.vmName === key)
      .flatMap((r) => r.facts)
      .flatMap((f) => (f.e === 'stage' && f.stage === 'lost' && f.atMs !== undefined && f.atMs >= at - 2_000 ? [f.atMs] : []))
      .sort((a, b) => a - b)[0];
    out[key] = lostAt === undefined ? undefined : Math.max(0, lostAt - at);
  }
  return out;
}

/**
 * Instances one install's workers removed although another install owns them, as the cloud saw
 * it: the fake's delete calls name what they removed and whose it was; at the local level (no
 * call log) a quiet Ready VM whose instance is gone at the cloud although nobody made it vanish.
 */
export function foreignDeletions(ev: Evidence): { vm?: string; detail: string }[] {
  const out: { vm?: string; detail: string }[] = [];
  for (const c of ev.calls ?? []) {
    for (const r of c.removed ?? []) {
      if (r.owner !== undefined && c.deployment !== undefined && r.owner !== c.deployment)
        out.push({ ...(c.vmName ? { vm: c.vmName } : {}), detail: `${c.deployment} deleted ${r.id} of ${r.owner} in ${c.region ?? '?'}` });
    }
  }
  if (ev.calls) return out;
  const seen = new Set<string>();
  for (const s of ev.samples) {
    const id = s.instanceIds?.[0];
    if (!s.quiet || s.stage !== 'ready' || !id || ev.vanished.includes(s.vm) || s.live.some((i) => i.id === id) || seen.has(id)) continue;
    seen.add(id);
    out.push({ vm: s.vm, detail: `${s.vm} was ready on ${id}, which is gone at the cloud although nothing made it vanish` });
  }
  return out;
}

/** Samples whose VM holds an instance the cloud shows as another VM's or another install's. */
function foreignAdoptions(ev: Evidence): Violation[] {
  const keyOf = new Map<string, string>();
  for (const s of ev.samples) for (const i of s.live) keyOf.set(i.id, i.vmName);
  const out: Violation[] = [];
  const seen = new Set<string>();
  for (const s of ev.samples) {
    for (const id of s.instanceIds ?? []) {
      const owner = keyOf.get(id);
      if (owner === undefined || owner === s.vm || seen.has(`${s.vm}|${id}`)) continue;
      seen.add(`${s.vm}|${id}`);
      out.push(v('installs-isolated', s.vm, `holds ${id}, which the cloud shows as ${owner}'s (stage ${s.stage ?? '?'})`));
    }
  }
  return out;
}

export const WATCHER_INVARIANTS: Invariant[] = [
  {
    id: 'installs-isolated',
    says: "independent installs sharing one cloud: no install deletes, adopts or reports lost another's instance (counted at the cloud)",
    check: (ev) => [
      ...foreignDeletions(ev).map((d) => v('installs-isolated', d.vm, d.detail)),
      ...foreignAdoptions(ev),
      ...ev.runs.flatMap((run) => {
        const c = closeOf(run);
        const stage = c?.status === 'completed' ? (c.result as VmStatus | undefined)?.stage : undefined;
        return stage === 'lost' && !ev.vanished.includes(run.vmName) && !ev.preempted?.[run.vmName]
          ? [v('installs-isolated', run.vmName, `${run.runId.slice(-8)} ended lost although nothing made its instance vanish or preempted it`)]
          : [];
      }),
    ],
  },
  {
    id: 'orphans-swept-within-grace',
    says: 'every instance is owned by an open workflow or deleted within the orphan grace plus one watcher cycle (terminated workflows leave orphans)',
    check: (ev) =>
      (ev.orphans?.left ?? []).map((i) =>
        v('orphans-swept-within-grace', i.vmName, `instance ${i.id} in ${i.region} still live ${ev.orphans?.waitedMs ?? '?'} ms after every workflow closed`),
      ),
  },
  {
    id: 'deployments-isolated',
    says: "no deployment touches another's resources: every observe, inventory, delete and cleanup returns or removes only the caller's",
    check: (ev) => {
      const out: Violation[] = [];
      for (const c of ev.calls ?? []) {
        // An adapter built without a deployment sees every owner's: anything it touched is foreign.
        const foreign = (c.owners ?? []).filter((o) => o !== c.deployment);
        if (foreign.length > 0)
          out.push(
            v('deployments-isolated', c.vmName, `${c.primitive} by ${c.deployment ?? '?'} in ${c.region ?? '?'} touched ${foreign.join(', ')}'s resources`),
          );
      }
      return out.slice(0, 5);
    },
  },
  {
    id: 'lost-within-cycle',
    says: "a Ready VM whose instance vanished behind its back is lost within one of the watcher's cycles while VMs are up (plus a small allowance)",
    check: (ev) => {
      const fast = Math.max(ev.watcher?.fastIntervalMs ?? 0, ev.watcher?.readyIntervalMs ?? 0);
      const allowed = fast + LOST_ALLOWANCE_MS + DISRUPTION_ALLOWANCE_MS * ev.disruptions;
      return Object.entries(lostDelays(ev)).flatMap(([key, ms]) =>
        ms === undefined
          ? [v('lost-within-cycle', key, 'vanished but never lost')]
          : ms > allowed
            ? [v('lost-within-cycle', key, `lost ${ms} ms after it vanished (allowed ${allowed} ms: a ${fast} ms cycle + allowance)`)]
            : [],
      );
    },
  },
];
