/**
 * The docker cloud on a real Docker engine (a private dockerd, see ./docker-engine/engine.ts),
 * driven through the `provision` CLI as a user types it: the embedded default with a temporary
 * HOME, DOCKER_HOST at the engine. What is left is counted at the engine, not from our records.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { VmStatus } from '../../src/core/api';
import { DockerProvider } from '../../src/providers/docker';
import { containerName } from '../../src/providers/docker/map';
import { freePort } from '../../src/ports';
import { requireServer } from '../harness/temporal';
import { specFor } from '../providers/conformance';
import { describeWithEngine, startEngine, type Engine } from './docker-engine/engine';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const DEPLOYMENT = 'dk-e2e';
const at = { cloud: 'docker', region: 'local' };

describeWithEngine('the docker cloud on a real engine, through the CLI', () => {
  describe.skipIf(!requireServer())('start, ssh, status, down; a create cut before its start', () => {
    let engine: Engine;
    let home: string;
    let env: NodeJS.ProcessEnv;
    const provision = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
      try {
        const r = await run(process.execPath, [join(ROOT, 'bin', 'provision.js'), ...args], { env, cwd: ROOT, timeout: 240_000 });
        return { code: 0, out: r.stdout, err: r.stderr };
      } catch (e) {
        const x = e as { code?: number; stdout?: string; stderr?: string };
        return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? '' };
      }
    };
    const ssh = (name: string, command: string): string =>
      execFileSync('ssh', ['-F', join(home, '.ssh', 'config'), '-o', 'BatchMode=yes', name, command], { encoding: 'utf8', env, timeout: 30_000 });
    const adapter = (): DockerProvider => new DockerProvider({ socketPath: engine.host.slice('unix://'.length), deployment: DEPLOYMENT });

    beforeAll(async () => {
      engine = await startEngine();
      home = mkdtempSync(join(tmpdir(), 'gpuprov-e2e-docker-'));
      mkdirSync(join(home, '.ssh'), { mode: 0o700 });
      // One key for the user and the worker, so a container made outside the worker (below) admits both.
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(home, '.ssh', 'id_ed25519')]);
      env = {
        PATH: process.env.PATH,
        HOME: home,
        TEMPORAL_CLI_PATH: inject('temporalCliPath'),
        GPUPROV_EMBEDDED_PORT: String(await freePort()),
        GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
        GPUPROV_SSH_KEY_FILE: join(home, '.ssh', 'id_ed25519'),
        GPUPROV_DEPLOYMENT: DEPLOYMENT,
        DOCKER_HOST: engine.host,
      };
    });
    afterAll(async () => {
      await provision('server', 'stop');
      await engine?.close();
    });

    it('start → ssh runs a command in the container → status → down → nothing left at the engine', async () => {
      const t0 = Date.now();
      const start = await provision('start', '--name', 'dk1', '--cloud', 'docker', '--json');
      expect(start.code, start.err).toBe(0);
      process.stderr.write(`docker e2e: dk1 ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (with the embedded default's start)\n`);
      const status = (JSON.parse(start.out) as { status: VmStatus }).status;
      expect(status).toMatchObject({ stage: 'ready', offer: { cloud: 'docker', region: 'local' } });
      expect((await engine.counts()).containers).toBe(1);

      // Inside the container: Docker's marker file, and the hostname the adapter gave it.
      expect(ssh('dk1', 'test -f /.dockerenv && hostname && echo ok-$((40+2))').trim().split('\n')).toEqual([expect.stringMatching(/^gpuprov-dk1-/), 'ok-42']);

      const st = await provision('status', 'dk1', '--json');
      expect(st.code, st.err).toBe(0);
      expect(JSON.parse(st.out)).toMatchObject({ stage: 'ready', endpoint: { host: '127.0.0.1', user: 'root' } });

      const down = await provision('down', 'dk1');
      expect(down.code, down.err).toBe(0);
      expect(await engine.counts()).toEqual({ containers: 0, volumes: 0, networks: 0 });
    });

    it('a container left `created` by a killed create is started by the retry: one running container of that type within seconds', async () => {
      const docker = adapter();
      const [offer] = await docker.plan({ vmName: 'dk2', k8s: false });
      const spec = specFor('dk2', {
        owner: DEPLOYMENT,
        publicKeys: [execFileSync('ssh-keygen', ['-y', '-f', join(home, '.ssh', 'id_ed25519')], { encoding: 'utf8' }).trim()],
      });
      // The worker "dies" between the container's create and its start: the adapter's own create, cut there.
      const api = (docker as unknown as { api: { startContainer(id: string): Promise<void> } }).api;
      api.startContainer = () => Promise.reject(new Error('worker killed'));
      await expect(docker.create(offer!, await docker.prepare(offer!, spec), spec)).rejects.toThrow('worker killed');
      const [left] = await adapter().observe(at, 'dk2');
      expect(left).toMatchObject({ status: 'Pending', reason: 'Created' });

      const t0 = Date.now();
      const start = await provision('start', '--name', 'dk2', '--cloud', 'docker', '--json');
      const tookMs = Date.now() - t0;
      expect(start.code, start.err).toBe(0);
      const status = (JSON.parse(start.out) as { status: VmStatus }).status;
      expect(status.attempts).toHaveLength(1);
      expect(status.instanceIds).toEqual([left!.id]);
      expect(status.offer?.instanceType).toBe(offer!.instanceType);
      // The boot timeout is 2 minutes: a launch that waited it out would take longer than this.
      expect(tookMs).toBeLessThan(45_000);
      expect(await adapter().observe(at, 'dk2')).toMatchObject([{ id: left!.id, status: 'Running' }]);
      expect(ssh('dk2', 'echo started').trim()).toBe('started');
      process.stderr.write(`docker e2e: adopted the created container and was ready in ${(tookMs / 1000).toFixed(1)} s\n`);

      expect((await provision('down', 'dk2')).code).toBe(0);
      expect(await engine.counts()).toEqual({ containers: 0, volumes: 0, networks: 0 });
    });

    it('a created container whose start the runtime refuses: that attempt is classified Failed at once, the next type comes up', async () => {
      const docker = adapter();
      const [offer] = await docker.plan({ vmName: 'dk4', k8s: false });
      // As a killed create would leave it (the adapter's name and labels), but with an entrypoint that cannot run.
      const name = containerName('dk4', DEPLOYMENT);
      await engine.docker(
        'create',
        '--name',
        name,
        '--label',
        `gpuprov-vm-name=dk4`,
        '--label',
        `gpuprov-owner=${DEPLOYMENT}`,
        '--entrypoint',
        '/nonexistent',
        'gpuprov/sshd:1',
      );
      const t0 = Date.now();
      const start = await provision('start', '--name', 'dk4', '--cloud', 'docker', '--json');
      const tookMs = Date.now() - t0;
      expect(start.code, start.err).toBe(0);
      const status = (JSON.parse(start.out) as { status: VmStatus }).status;
      expect(status.attempts.map((a) => [a.offer.instanceType, a.outcome, a.kind])).toEqual([
        [offer!.instanceType, 'failed', 'Failed'],
        [expect.not.stringMatching(`^${offer!.instanceType}$`), 'ready', undefined],
      ]);
      expect(status.attempts[0]!.message).toContain('OCI runtime create failed');
      expect(tookMs).toBeLessThan(60_000);
      process.stderr.write(`docker e2e: a refused start was classified and the next type was ready in ${(tookMs / 1000).toFixed(1)} s\n`);
      expect((await provision('down', 'dk4')).code).toBe(0);
      expect(await engine.counts()).toEqual({ containers: 0, volumes: 0, networks: 0 });
    });

    it('an engine that is gone: start names the engine and the fix, not widening the search', async () => {
      let t0 = Date.now();
      await engine.close();
      process.stderr.write(`docker e2e: engine stopped in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
      t0 = Date.now();
      const start = await provision('start', '--name', 'dk3', '--cloud', 'docker');
      process.stderr.write(`docker e2e: start against no engine answered in ${((Date.now() - t0) / 1000).toFixed(1)} s:\n${start.err}`);
      expect(start.code).toBe(1);
      expect(start.err).toContain(`no Docker engine answers at ${engine.host}`);
      expect(start.err).toContain('start dockerd, or point DOCKER_HOST at a running engine');
      expect(start.err).not.toContain('widen the search');
      const offers = await provision('offers', '--cloud', 'docker');
      expect(offers.code).toBe(1);
      expect(offers.err).toContain(`docker: skipped (Unavailable): docker info: no Docker engine answers at ${engine.host}`);
      expect(offers.err).toContain('fix: fix what the message names on the worker (the engine or endpoint)');
      expect(offers.err + offers.out).not.toContain('widen the search');
    });
  });
});
