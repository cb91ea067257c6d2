/**
 * `provision fleet apply` says what happened: the first apply starts the fleet ("started with
 * generation 1", not "already applied"), the same shape again is a no-op, a rejected shape says
 * what is wrong. Against the run's dev server and the in-memory fake cloud.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import { runTestCli, type CliResult } from '../../harness/cli';
import { ProviderRegistry } from '../../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../../src/ssh';
import { FakeProvider } from '../../harness/fake-provider';
import { requireServer, startTestWorker, type TestWorker } from '../../harness/temporal';

describe.skipIf(!requireServer())('provision fleet apply: what the first apply says', () => {
  let root: string;
  let worker: TestWorker;
  let fake: FakeProvider;
  const name = `fa${Date.now().toString(36).slice(-6)}`;
  const cli = (...args: string[]): Promise<CliResult> => runTestCli(root, worker.taskQueue, args);
  const file = (gen: number, vm: unknown): string => {
    const f = join(root, `shape-${gen}-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(f, JSON.stringify({ name, generation: gen, groups: [{ id: 'cpu', role: 'worker', count: 1, vm }] }));
    return f;
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-fleetapply-'));
    fake = new FakeProvider();
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([fake]), ssh, owner: 'default', prober: fake.prober() }) });
  });
  afterAll(async () => {
    await cli('fleet', 'down', name).catch(() => undefined);
    await cli('fleet', 'down', `${name}x`).catch(() => undefined);
    await worker?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a rejected VM spec: exit 2 with what is wrong, and no fleet', async () => {
    const r = await cli('fleet', 'apply', '-f', file(1, { ttlMs: 1 }));
    expect(r.code).toBe(2);
    expect(r.err).toContain('groups.0.vm.ttlMs: TTL 1ms is out of range: use 1m to 30d');
    expect(r.err + r.out).not.toContain('already applied');
    const s = await cli('fleet', 'status', name);
    expect(s.code).toBe(1);
    expect(s.err).toContain(`no such fleet: nothing named ${name} was applied`);
  });

  it('first apply starts the fleet; the same shape again is a no-op; an older generation is refused with its reason', async () => {
    const shape = file(1, {});
    const first = await cli('fleet', 'apply', '-f', shape);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain(`fleet ${name}: started with generation 1`);
    const again = await cli('fleet', 'apply', '-f', shape, '--json');
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ ok: true, name, generation: 1, changed: false, started: false });
    const older = await cli('fleet', 'apply', '-f', file(0, {}));
    expect(older.code).toBe(1);
    expect(older.err).toContain('generation regressed: 0 < 1');
    // Down once converged (as a user would); a down during the first launch is another test's subject.
    let converged = false;
    for (let i = 0; i < 240 && !converged; i++) {
      const st = await cli('fleet', 'status', name, '--json');
      converged = st.code === 0 && (JSON.parse(st.out) as { converged: boolean }).converged;
      if (!converged) await new Promise((r) => setTimeout(r, 250));
    }
    expect(converged).toBe(true);
    const down = await cli('fleet', 'down', name);
    expect(down.code, down.err).toBe(0);
  });

  it('down right after the first apply (while the slot is launching): exits 0 and leaves no instance', async () => {
    const fleet = `${name}x`;
    const f = join(root, 'now.json');
    writeFileSync(f, JSON.stringify({ name: fleet, generation: 1, groups: [{ id: 'cpu', role: 'worker', count: 2, vm: {} }] }));
    const first = await cli('fleet', 'apply', '-f', f);
    expect(first.code, first.err).toBe(0);
    const down = await cli('fleet', 'down', fleet);
    expect(down.code, down.err).toBe(0);
    // Counted at the cloud: every slot's instance is gone once the fleet is down (bounded wait).
    for (let i = 0; i < 240 && fake.live().some((x) => x.vmName.startsWith(fleet)); i++) await new Promise((r) => setTimeout(r, 250));
    expect(fake.live().filter((x) => x.vmName.startsWith(fleet))).toEqual([]);
  });
});
