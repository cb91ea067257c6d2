/**
 * The worker's clouds, from its environment: every adapter whose credentials are present, plus
 * the `local` cloud (always registered; planned by default only when no other cloud is).
 */
import { ProviderRegistry } from './registry';
import { rateLimitFor } from '../core/rate-limits';
import type { CloudProvider } from '../core/provider';
import type { DeploymentOption } from './deployment';
import * as aws from './aws';
import * as gcp from './gcp';
import * as lambda from './lambda';
import * as runpod from './runpod';
import * as primeintellect from './primeintellect';
import * as vastai from './vastai';
import * as hyperstack from './hyperstack';
import * as digitalocean from './digitalocean';
import * as verda from './verda';
import * as massedcompute from './massedcompute';
import * as nebius from './nebius';
import * as docker from './docker';
import * as local from './local';

/** Adapter factories in the default preference order. */
const FACTORIES: ((env: NodeJS.ProcessEnv, opts: DeploymentOption) => CloudProvider | undefined)[] = [
  aws.fromEnv,
  gcp.fromEnv,
  lambda.fromEnv,
  runpod.fromEnv,
  primeintellect.fromEnv,
  vastai.fromEnv,
  hyperstack.fromEnv,
  digitalocean.fromEnv,
  verda.fromEnv,
  massedcompute.fromEnv,
  nebius.fromEnv,
  docker.fromEnv,
];

/** Clouds that need no credentials: used only when named (`--cloud docker`), or `local` as the fallback. */
const IMPLICIT = ['local', 'docker'];

/**
 * Clouds planned when the user names none: every cloud with credentials; without any, `local`
 * (the README's first command launches with no credentials at all). Docker is never picked implicitly: a daemon on the machine is not a request to use it.
 */
export function defaultClouds(registry: ProviderRegistry): string[] {
  const names = registry.names();
  const real = names.filter((n) => !IMPLICIT.includes(n));
  if (real.length > 0) return real;
  return names.includes('local') ? ['local'] : names;
}

/**
 * Every adapter is built knowing `opts.deployment`: it tags and sees only that deployment's resources.
 * Its vendor calls are paced at the cloud's rate (GPUPROV_RATE_<CLOUD> or the default; a bad value throws InputError).
 */
export function registryFromEnv(env: NodeJS.ProcessEnv = process.env, opts: DeploymentOption = {}): ProviderRegistry {
  const providers: CloudProvider[] = [];
  const only = env.GPUPROV_CLOUDS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const make of FACTORIES) {
    const p = make(env, opts);
    if (p && (!only || only.includes(p.name))) providers.push(p);
  }
  if (!only || only.includes('local')) providers.push(local.fromEnv(env, opts));
  return new ProviderRegistry(providers, { perSecond: (cloud) => rateLimitFor(cloud, env) });
}
