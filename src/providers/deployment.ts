/**
 * The deployment identity: which gpuprov deployment (staging, prod, …) owns an instance. Every
 * adapter is built knowing its deployment, writes it on every instance and side resource, and
 * sees only what carries it: two deployments sharing a cloud account never touch each other's VMs.
 */
import { createHash } from 'node:crypto';
import { InputError } from '../core/errors';
import type { Location, Observed, Owned } from '../core/provider';

/** The deployment of an adapter built without one (the Temporal default namespace). */
export const DEFAULT_DEPLOYMENT = 'default';

/** The environment variable that names the deployment (default: the Temporal namespace). */
export const DEPLOYMENT_VAR = 'GPUPROV_DEPLOYMENT';

/**
 * Lower-case letters, digits and `-`, 1–32 characters, starting and ending with a letter or digit:
 * valid as an AWS/Docker tag, a GCP/Nebius label value, a DigitalOcean tag and inside a host name.
 */
const PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

/** What adapters take in their constructor options and `fromEnv`. */
export interface DeploymentOption {
  /** The owning deployment (validated by {@link deploymentFromEnv}); default {@link DEFAULT_DEPLOYMENT}. */
  deployment?: string;
}

/** Why `id` cannot be a deployment id, or undefined when it can. */
export function deploymentProblem(id: string): string | undefined {
  if (PATTERN.test(id)) return undefined;
  return `"${id}" is not a deployment id: use 1-32 lower-case letters, digits and "-", starting and ending with a letter or digit`;
}

/**
 * The worker's deployment: `GPUPROV_DEPLOYMENT`, else the namespace (lower-cased, other characters
 * such as Temporal Cloud's `.` turned into `-`). A bad value is an InputError naming the variable.
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv, namespace: string): string {
  const given = env[DEPLOYMENT_VAR];
  const id = given ? given : namespace.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const problem = deploymentProblem(id);
  if (problem) {
    throw new InputError(
      DEPLOYMENT_VAR,
      given ? problem : `the namespace "${namespace}" gives no deployment id: ${problem}`,
      `set ${DEPLOYMENT_VAR}=<id>, e.g. ${DEPLOYMENT_VAR}=prod`,
    );
  }
  return id;
}

/** The deployment of adapter options: given and valid, else DEFAULT_DEPLOYMENT; an invalid one throws. */
export function deploymentOf(opts: DeploymentOption | undefined): string {
  const id = opts?.deployment ?? DEFAULT_DEPLOYMENT;
  const problem = deploymentProblem(id);
  if (problem) throw new InputError(DEPLOYMENT_VAR, problem);
  return id;
}

/** Six hex characters of the deployment id: short enough for any vendor name field, stable. */
export function deploymentHash(deployment: string): string {
  return createHash('sha256').update(deployment).digest('hex').slice(0, 6);
}

/**
 * The name of an instance on clouds that only keep a name: `gpuprov-<vm>-<hash of the deployment>`,
 * so two deployments' `gpu1` have different names.
 */
export function ownedName(vmName: string, deployment: string): string {
  return `gpuprov-${vmName}-${deploymentHash(deployment)}`;
}

/** The VM name inside an {@link ownedName} of this deployment, or undefined (another deployment's, or not ours). */
export function vmNameOfOwnedName(name: string | null | undefined, deployment: string): string | undefined {
  const suffix = `-${deploymentHash(deployment)}`;
  if (!name?.startsWith('gpuprov-') || !name.endsWith(suffix)) return undefined;
  const vm = name.slice('gpuprov-'.length, -suffix.length);
  return vm || undefined;
}

/**
 * Explicit ids a name-only cloud may delete for `vmName`: ids the listing does not show (unknown or
 * gone: the vendor's not-found counts as success) and ids listed under this VM's name in this
 * deployment, or its name from before deployments (`gpuprov-<vm>`). Another deployment's are never.
 */
export function deletableByName(ids: Iterable<string>, listed: { id: string; name?: string | null }[], vmName: string, deployment: string): string[] {
  const names = new Set([ownedName(vmName, deployment), `gpuprov-${vmName}`]);
  return [...new Set(ids)].filter((id) => {
    const seen = listed.find((x) => x.id === id);
    return !seen || names.has(seen.name ?? '');
  });
}

/**
 * `inventory` of a cloud whose identity is the name (`gpuprov-<vm>-<hash>`): every listed item
 * named for this deployment that `observe` keeps (it filters by region and maps; undefined: not here).
 */
export function ownedByName<T>(
  items: readonly T[],
  deployment: string,
  nameOf: (item: T) => string | null | undefined,
  observe: (item: T, vmName: string) => Observed | undefined,
): Owned[] {
  return items.flatMap((item) => {
    const vmName = vmNameOfOwnedName(nameOf(item), deployment);
    const o = vmName === undefined ? undefined : observe(item, vmName);
    return o && vmName !== undefined ? [{ ...o, vmName }] : [];
  });
}

/**
 * `inventory` of a name-identity cloud whose items carry their data centre (`dataCenterId`; none:
 * anywhere), listed account-wide: every item named for this deployment and placed at `at`.
 */
export function ownedAtDataCentre<T extends { name?: string | null; dataCenterId?: string | null }>(
  items: readonly T[],
  deployment: string,
  at: Location,
  toObserved: (item: T, at: Location) => Observed | undefined,
): Owned[] {
  return ownedByName(
    items,
    deployment,
    (i) => i.name,
    (i) => ((i.dataCenterId ?? at.region) === at.region ? toObserved(i, at) : undefined),
  );
}
