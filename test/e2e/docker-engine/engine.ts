/**
 * A real Docker engine for the tests: `scripts/docker-engine.sh` starts a private dockerd (own data
 * root, socket and bridge, vfs, no iptables) under a temp dir and loads the sshd image built by
 * `scripts/docker-engine.sh image` (`GPUPROV_TEST_DOCKER_IMAGE`, exported by `.ci/run`); close()
 * stops it and removes the dir. `GPUPROV_TEST_DOCKER_HOST=unix://…` uses an engine you run instead
 * (it must have gpuprov/sshd:1); GPUPROV_DOCKERD another dockerd binary (a newer engine, API > 1.43).
 * Without either the suite skips; GPUPROV_REQUIRE_ALL=1 fails it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'docker-engine.sh');
const DOCKERD = process.env.GPUPROV_DOCKERD ?? '/usr/sbin/dockerd';
const INSTALL = 'run `bash .ci/run`, or: apt-get install -y docker.io debootstrap && export GPUPROV_TEST_DOCKER_IMAGE="$(bash scripts/docker-engine.sh image)"';

export interface Engine {
  /** `unix://…/docker.sock`, for DOCKER_HOST. */
  host: string;
  /** What the engine holds, counted at the engine (networks beyond its three defaults). */
  counts(): Promise<{ containers: number; volumes: number; networks: number }>;
  /** `docker` CLI against this engine; stdout. */
  docker(...args: string[]): Promise<string>;
  close(): Promise<void>;
}

/** Why no engine can be had here, or undefined when one can. */
function missing(): string | undefined {
  if (process.env.GPUPROV_TEST_DOCKER_HOST) return undefined;
  const image = process.env.GPUPROV_TEST_DOCKER_IMAGE;
  if (!existsSync(DOCKERD)) return `no ${DOCKERD}`;
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  if (!image || !existsSync(image)) return 'GPUPROV_TEST_DOCKER_IMAGE does not name the image tarball';
  return undefined;
}

/** `describe` when an engine can be had; else skipped, or failing with GPUPROV_REQUIRE_ALL=1. */
export function describeWithEngine(name: string, body: () => void): void {
  const why = missing();
  if (!why) describe(name, body);
  else if (process.env.GPUPROV_REQUIRE_ALL === '1')
    describe(name, () => {
      it('needs a Docker engine', () => {
        throw new Error(`${why} and GPUPROV_REQUIRE_ALL=1: ${INSTALL}`);
      });
    });
  else describe.skip(`${name} (${why})`, body);
}

/** Start (or attach to) the engine; its set-up times go to stderr. */
export async function startEngine(): Promise<Engine> {
  const given = process.env.GPUPROV_TEST_DOCKER_HOST;
  const dir = given ? undefined : mkdtempSync(join(tmpdir(), 'gpuprov-dockerd-'));
  let host = given;
  if (dir) {
    const r = await run('bash', [SCRIPT, 'start', dir, process.env.GPUPROV_TEST_DOCKER_IMAGE!], { timeout: 120_000 });
    process.stderr.write(r.stderr);
    host = r.stdout.trim();
  }
  const docker = async (...args: string[]): Promise<string> => (await run('docker', ['-H', host!, ...args], { timeout: 60_000 })).stdout;
  process.stderr.write(`docker engine: ${(await docker('version', '--format', 'Docker {{.Server.Version}}, API {{.Server.APIVersion}}')).trim()}\n`);
  const lines = (s: string): number => s.split('\n').filter(Boolean).length;
  return {
    host: host!,
    docker,
    counts: async () => ({
      containers: lines(await docker('ps', '-aq')),
      volumes: lines(await docker('volume', 'ls', '-q')),
      networks: lines(await docker('network', 'ls', '-q', '--filter', 'type=custom')),
    }),
    close: async () => {
      if (dir) await run('bash', [SCRIPT, 'stop', dir], { timeout: 60_000 });
    },
  };
}
