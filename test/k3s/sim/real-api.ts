/**
 * The real Kubernetes API server's parts for test/k3s/real-api.test.ts, found without building
 * anything (scripts/kube-apiserver.sh builds and caches kube-apiserver; .ci/run installs
 * Debian's etcd-server):
 * - kube-apiserver: GPUPROV_KUBE_APISERVER, else `<cacheDir>/kube-apiserver-v1.37.2/kube-apiserver`;
 * - etcd: GPUPROV_ETCD, else /usr/bin/etcd.
 * `startEtcd` runs one etcd on 127.0.0.1 for the suite, its data under the given directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../../../src/paths';
import { freePort } from './simulated-cloud';

export const KUBE_APISERVER_VERSION = 'v1.37.2';

export function kubeApiserverPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.GPUPROV_KUBE_APISERVER || join(cacheDir(env), `kube-apiserver-${KUBE_APISERVER_VERSION}`, 'kube-apiserver');
}

export function etcdPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.GPUPROV_ETCD || '/usr/bin/etcd';
}

export interface Etcd {
  url: string;
  stop(): Promise<void>;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`);
    return res.ok && ((await res.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

/** One etcd on 127.0.0.1, answering `/health` before this resolves (its log: `<dir>/etcd.log`). */
export async function startEtcd(dir: string): Promise<Etcd> {
  mkdirSync(dir, { recursive: true });
  const [client, peer] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const log = openSync(join(dir, 'etcd.log'), 'a');
  const etcd: ChildProcess = spawn(
    etcdPath(),
    [
      `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
    ],
    { stdio: ['ignore', log, log] },
  );
  const stop = async (): Promise<void> => {
    if (etcd.exitCode !== null || etcd.signalCode !== null) return;
    const exited = new Promise((r) => etcd.once('exit', r));
    etcd.kill('SIGTERM');
    await exited;
  };
  for (let i = 0; i < 300 && !(await healthy(url)); i++) {
    if (etcd.exitCode !== null) throw new Error(`etcd exited ${etcd.exitCode}: see ${join(dir, 'etcd.log')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!(await healthy(url))) {
    await stop();
    throw new Error(`etcd did not answer /health: see ${join(dir, 'etcd.log')}`);
  }
  return { url, stop };
}

/** Both parts present (the suite skips, or with GPUPROV_REQUIRE_ALL=1 fails, otherwise). */
export function haveRealApi(env: NodeJS.ProcessEnv = process.env): boolean {
  return existsSync(kubeApiserverPath(env)) && existsSync(etcdPath(env));
}
