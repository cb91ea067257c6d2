/**
 * What a release (a teardown, a compensation, the sweep) may delete of the instances the cloud
 * lists under one VM name at one location. Two installs that share a deployment id on purpose can
 * create the same name in one region at the same moment (neither existed yet, so both pass the
 * NameTaken check); the cloud's create key is then the only thing that tells their instances
 * apart, and a release must spare the other's. Pure.
 *
 * | listed instance                                          | row     | release                     |
 * |----------------------------------------------------------|---------|-----------------------------|
 * | its id is one the release must keep (`keep`)             | `spare` | left running, not waited on |
 * | its id is one the release was given                      | `own`   | delete, wait until gone     |
 * | any other, in an `exact` release (only the given ids)    | `spare` | left running, not waited on |
 * | no create key (the cloud keeps none)                     | `own`   | delete, wait until gone     |
 * | the release knows no create keys (older callers)         | `own`   | delete, wait until gone     |
 * | its create key is one of the release's                   | `own`   | delete, wait until gone     |
 * | another create key                                       | `spare` | left running, not waited on |
 *
 * `keep` and `exact` serve a preempted instance retiring beside its replacement (same name, maybe
 * the same place, on clouds that keep no create key): a failed attempt of the replacement keeps the
 * retiring instance, and the retiring instance's own deletion is exact, so neither takes the other.
 *
 * Side resources are per VM name: while a spared instance lives, `cleanup` is skipped (they
 * serve it; its own teardown cleans up).
 */
import type { Observed } from './provider';

export interface ReleaseScope {
  /** Ids to delete and wait for. */
  own: string[];
  /** Ids of instances another create made: never deleted here. */
  spare: string[];
}

/** How a release narrows what it deletes beyond create keys (the first two rows of the table). */
export interface ScopeLimits {
  /** Ids never deleted here. */
  keep?: readonly string[];
  /** Only the given ids are deleted. */
  exact?: boolean;
}

/**
 * Splits `listed` into the release's own instances and those to spare. `createKeys`: the create
 * keys of the creates this release undoes (undefined or empty: it knows none, everything is own).
 */
export function releaseScope(
  listed: readonly Observed[],
  ids: readonly string[],
  createKeys: readonly string[] | undefined,
  limits: ScopeLimits = {},
): ReleaseScope {
  const keys = new Set(createKeys ?? []);
  const given = new Set(ids);
  const keep = new Set(limits.keep ?? []);
  const out: ReleaseScope = { own: [], spare: [] };
  for (const o of listed) {
    const byKey = o.createKey === undefined || keys.size === 0 || keys.has(o.createKey);
    const mine = !keep.has(o.id) && (given.has(o.id) || (!limits.exact && byKey));
    (mine ? out.own : out.spare).push(o.id);
  }
  return out;
}

/** The idempotency key of a launch's attempt `index` (unique per run: a later VM of the name never reuses one). */
export function attemptIdempotencyKey(workflowId: string, runId: string, index: number): string {
  return `${workflowId}/${runId}/${index}`;
}
