/**
 * Fleets on the real dev server with the local cloud (real sshd per node): converge, scale,
 * rolling replacement on a spec change, a bootstrap that fails once, `provision logs`, `fleet down`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { logsCommand } from '../../src/client/commands/logs';
import type { FleetGroup, FleetShape } from '../../src/core/fleet/types';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import type { fleetWorkflow } from '../../src/workflows';
import { applyShapeUpdate, fleetStatusQuery, fleetTeardownSignal, type FleetStatus } from '../../src/core/fleet-api';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST } from '../workflows/helpers';

const haveSshd = existsSync('/usr/sbin/sshd');
const BASE = 20_000 + Math.floor(Math.random() * 20_000);

function accepts(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), res(true)));
    s.once('error', () => res(false));
  });
}

async function until(h: WorkflowHandle, pred: (s: FleetStatus) => boolean, what: string, ms = 90_000): Promise<FleetStatus> {
  const end = Date.now() + ms;
  let last: FleetStatus | undefined;
  while (Date.now() < end) {
    last = await h.query(fleetStatusQuery).catch(() => last);
    if (last && pred(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last?.slots.map((s) => [s.slot, s.attempt, s.stage, s.pending, s.failedReason]))}`);
}

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('fleet on the local cloud (real sshd)', () => {
  let root: string;
  let worker: TestWorker;
  let h: WorkflowHandle<typeof fleetWorkflow>;
  const name = `fl${Date.now().toString(36).slice(-6)}`;

  const group = (id: string, count: number, portBase: number, extra: Partial<FleetGroup['bootstrap']> = {}): FleetGroup => ({
    id,
    role: id,
    count,
    vm: { clouds: ['local'] },
    bootstrap: {
      verify: ['test -d /tmp', 'echo "verifying $GPUPROV_NODE"'],
      start: 'echo "serving $GPUPROV_NODE on $PORT mode=${MODE:-v1}"; echo "warming up" >&2; exec python3 -u -m http.server "$PORT" --bind 127.0.0.1',
      ready: id === 'web' ? { http: { path: '/' } } : { tcp: {} },
      timeout: 30,
      portBase,
      dir: join(root, 'boot'),
      ...extra,
    },
  });
  let shape: FleetShape;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-fleet-'));
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const activities = createActivities({ registry: new ProviderRegistry([new LocalProvider({ root })]), ssh, owner: 'default' });
    worker = await startTestWorker({ activities });
    shape = { name, generation: 1, groups: [group('web', 2, BASE), group('db', 2, BASE + 100)] };
    const client = await testEnv().client();
    h = await client.workflow.start<typeof fleetWorkflow>('fleetWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: `fleet-${name}`,
      args: [{ shape, tuning: { backoffBaseMs: 1_000, backoffCapMs: 4_000, readyPollMs: 300 }, vmTuning: FAST }],
    });
  });

  afterAll(async () => {
    await h?.signal(fleetTeardownSignal).catch(() => undefined);
    await Promise.race([h?.result().catch(() => undefined), new Promise((r) => setTimeout(r, 60_000))]);
    await worker?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('2 groups × 2 nodes with a bootstrap serving a port → converged', async () => {
    const s = await until(h, (x) => x.converged, 'converged gen 1');
    expect(s.slots.map((x) => x.slot)).toEqual([`${name}-db-0`, `${name}-db-1`, `${name}-web-0`, `${name}-web-1`]);
    expect(s.slots.every((x) => x.ready && x.bootstrap?.state === 'ready' && (x.bootstrap.lastStdoutSeq ?? 0) >= 1)).toBe(true);
    expect(countLive(root)).toBe(4);
    for (const p of [BASE, BASE + 1, BASE + 100, BASE + 101]) expect(await accepts(p)).toBe(true);
  });

  it('provision logs shows the start command output with sequence numbers', async () => {
    const out: string[] = [];
    const io = {
      out: (x: string) => out.push(x),
      err: () => undefined,
      isTTY: false,
      env: { ...process.env, TEMPORAL_ADDRESS: testEnv().address, TEMPORAL_NAMESPACE: testEnv().namespace, GPUPROV_STATE_DIR: root },
    };
    const code = await logsCommand.run([`${name}-web-1`, '-n', '50'], io);
    const text = out.join('');
    expect(code, text).toBe(0);
    expect(text).toMatch(new RegExp(`^verify 1 \\S+ verifying ${name}-web-1$`, 'm'));
    expect(text).toMatch(new RegExp(`^stdout 1 \\S+ serving ${name}-web-1 on ${BASE + 1} mode=v1$`, 'm'));
    expect(text).toMatch(/^stderr 1 \S+ warming up$/m);
    // the http ready check itself was logged by the server, on stderr, with later sequence numbers
    expect(text).toMatch(/^stderr [2-9]\d* \S+ .*"GET \/ HTTP\/1.0" 200/m);
  });

  it('rejects regressions and silent shape changes', async () => {
    await expect(h.executeUpdate(applyShapeUpdate, { args: [{ ...shape, groups: [group('web', 5, BASE)] }] })).rejects.toBeInstanceOf(
      WorkflowUpdateFailedError,
    );
    await expect(h.executeUpdate(applyShapeUpdate, { args: [{ ...shape, generation: 0 }] })).rejects.toThrow();
    expect(await h.executeUpdate(applyShapeUpdate, { args: [shape] })).toEqual({ generation: 1, changed: false });
  });

  it('scale web 2 → 3 → converged; the other nodes keep their attempts', async () => {
    const before = await h.query(fleetStatusQuery);
    shape = { ...shape, generation: 2, groups: [group('web', 3, BASE), group('db', 2, BASE + 100)] };
    expect(await h.executeUpdate(applyShapeUpdate, { args: [shape] })).toEqual({ generation: 2, changed: true });
    const s = await until(h, (x) => x.converged && x.generation === 2 && x.slots.length === 5, 'converged gen 2');
    for (const old of before.slots) expect(s.slots.find((x) => x.slot === old.slot)?.attempt).toBe(old.attempt);
    expect(countLive(root)).toBe(5);
    expect(await accepts(BASE + 2)).toBe(true);
  });

  it('change the db spec → its nodes are replaced one by one → converged', async () => {
    const before = await h.query(fleetStatusQuery);
    shape = { ...shape, generation: 3, groups: [group('web', 3, BASE), group('db', 2, BASE + 100, { env: { MODE: 'v2' } })] };
    await h.executeUpdate(applyShapeUpdate, { args: [shape] });
    // sample while it rolls: never both db nodes down at once
    let worst = 0;
    const s = await until(
      h,
      (x) => {
        worst = Math.max(worst, x.slots.filter((n) => n.group === 'db' && !n.ready).length);
        return x.converged && x.generation === 3;
      },
      'converged gen 3',
      120_000,
    );
    expect(worst).toBe(1);
    for (const n of s.slots) {
      const old = before.slots.find((x) => x.slot === n.slot)!;
      if (n.group === 'db') expect(n.attempt).toBeGreaterThan(old.attempt);
      else expect(n.attempt).toBe(old.attempt);
    }
    const drift = s.log.filter((e) => e.what === 'beginDelete (drift)').map((e) => e.slot);
    expect(drift).toEqual([`${name}-db-0`, `${name}-db-1`]);
    // db-1 began its replacement only after db-0's replacement was ready
    const i0 = s.log.findIndex(
      (e) => e.slot === `${name}-db-0` && e.what === 'bootstrap ready' && e.attempt === s.slots.find((x) => x.slot === `${name}-db-0`)!.attempt,
    );
    const i1 = s.log.findIndex((e) => e.slot === `${name}-db-1` && e.what === 'beginDelete (drift)');
    expect(i0).toBeGreaterThanOrEqual(0);
    expect(i1).toBeGreaterThan(i0);
    expect(countLive(root)).toBe(5);
  });

  it('a bootstrap that fails once is replaced after backoff', async () => {
    const flag = join(root, 'flaky-ok');
    shape = {
      ...shape,
      generation: 4,
      groups: [...shape.groups, group('flaky', 1, BASE + 200, { verify: [`test -f ${flag} || { touch ${flag}; echo "first try fails" >&2; exit 3; }`] })],
    };
    await h.executeUpdate(applyShapeUpdate, { args: [shape] });
    const s = await until(h, (x) => x.converged && x.generation === 4, 'converged gen 4', 120_000);
    const node = s.slots.find((x) => x.group === 'flaky')!;
    const events = s.log.filter((e) => e.slot === node.slot).map((e) => `${e.attempt}:${e.what}`);
    const first = node.attempt - 1;
    expect(events).toEqual(
      expect.arrayContaining([
        `${first}:bootstrap failed`,
        `${first}:beginDelete (failed)`,
        `${first}:markDestroyed`,
        `${node.attempt}:restart`,
        `${node.attempt}:bootstrap ready`,
      ]),
    );
    const failedAt = Date.parse(s.log.find((e) => e.slot === node.slot && e.what === 'markDestroyed')!.at);
    const restartedAt = Date.parse(s.log.find((e) => e.slot === node.slot && e.what === 'restart')!.at);
    expect(restartedAt - failedAt).toBeGreaterThanOrEqual(800); // ≥ base 1 s minus the jitter
    expect(node.failures).toBe(0);
  });

  it('fleet down → every node deleted, zero sshd left, the servers stopped', async () => {
    await h.signal(fleetTeardownSignal);
    const end = await h.result();
    expect(end.slots).toEqual([]);
    expect(countLive(root)).toBe(0);
    for (const p of [BASE, BASE + 1, BASE + 2, BASE + 100, BASE + 101, BASE + 200]) expect(await accepts(p)).toBe(false);
  });
});
