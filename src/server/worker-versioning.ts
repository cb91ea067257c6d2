/**
 * The Worker Deployment Version a worker process runs as (src/core/versioning.ts says when and
 * why): `workerDeploymentOptions` for every Worker.create of its WorkerGroup. The main worker and
 * the per-cloud activity-only workers share the one version, so that the activities of a PINNED
 * workflow run on workers of its own version, and `set-current-version` moves all task queues
 * together.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { DEFAULT_VERSIONING_BEHAVIOR, buildIdOf, versioningSetting } from '../core/versioning';
import { bundleHash } from './workflow-bundle';

/** gpuprov's package version (package.json above this file, in a checkout and when built). */
export function packageVersion(from = __dirname): string {
  for (let d = from; ; d = path.dirname(d)) {
    const file = path.join(d, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gpuprov' && pkg.version) return pkg.version;
    }
    if (path.dirname(d) === d) throw new Error(`no gpuprov package.json above ${from}`);
  }
}

/** The build id of the workflow bundle at `bundlePath`: `<package version>-<sha256 prefix>`. */
export function bundleBuildId(bundlePath: string, version = packageVersion()): string {
  return buildIdOf(version, bundleHash(bundlePath));
}

/**
 * The worker's deployment options, or undefined when versioning is off (the embedded default
 * and any worker without GPUPROV_WORKER_VERSIONING=1 run unversioned). Bad settings throw an
 * InputError before anything connects.
 */
export function workerVersioning(env: NodeJS.ProcessEnv, taskQueue: string, bundlePath: string): WorkerDeploymentOptions | undefined {
  const setting = versioningSetting(env, taskQueue);
  if (!setting.on) return undefined;
  return {
    useWorkerVersioning: true,
    version: { deploymentName: setting.deploymentName, buildId: bundleBuildId(bundlePath) },
    defaultVersioningBehavior: DEFAULT_VERSIONING_BEHAVIOR,
  };
}
