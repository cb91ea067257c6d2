/**
 * The adapter registry: one factory per row of the cloud table (src/core/clouds.ts), and the
 * worker's clouds from its environment: every adapter whose credentials are present (`local`
 * always is; planned by default only when no other cloud is).
 */
import { ProviderRegistry } from './registry';
import { CLOUD_NAMES, factsOf, type CloudName } from '../core/clouds';
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

/** Builds a cloud's adapter from the worker's environment, or undefined when its credentials are not there. */
export type AdapterFactory = (env: NodeJS.ProcessEnv, opts: DeploymentOption) => CloudProvider | undefined;

/** Every cloud's adapter: a new cloud is its folder, its row in the cloud table and one line here. */
export const ADAPTERS: Readonly<Record<CloudName, AdapterFactory>> = {
  aws: aws.fromEnv,
  gcp: gcp.fromEnv,
  lambda: lambda.fromEnv,
  runpod: runpod.fromEnv,
  primeintellect: primeintellect.fromEnv,
  vastai: vastai.fromEnv,
  hyperstack: hyperstack.fromEnv,
  digitalocean: digitalocean.fromEnv,
  verda: verda.fromEnv,
  massedcompute: massedcompute.fromEnv,
  nebius: nebius.fromEnv,
  docker: docker.fromEnv,
  local: local.fromEnv,
};

/**
 * Clouds planned when the user names none: every cloud with credentials; without any, `local`
 * (the README's first command launches with no credentials at all). Docker is never picked implicitly: a daemon on the machine is not a request to use it.
 */
export function defaultClouds(registry: ProviderRegistry): string[] {
  const names = registry.names();
  const real = names.filter((n) => factsOf(n)?.byDefault !== false);
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
  for (const cloud of CLOUD_NAMES) {
    const p = ADAPTERS[cloud](env, opts);
    if (p && (!only || only.includes(p.name))) providers.push(p);
  }
  return new ProviderRegistry(providers, { perSecond: (cloud) => rateLimitFor(cloud, env) });
}
