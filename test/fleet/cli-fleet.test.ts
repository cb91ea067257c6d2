/** `provision fleet apply | status | down` as a user types them, against the run's dev server and the local cloud. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import type { Io } from '../../src/client/command';
import { fleetCommand } from '../../src/client/commands/fleet';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';

describe.skipIf(!requireServer() || !requireTool('sshd', existsSync('/usr/sbin/sshd'), 'apt-get install -y openssh-server'))('provision fleet (CLI)', () => {
  let root: string;
  let worker: TestWorker;
  const name = `cf${Date.now().toString(36).slice(-6)}`;
  const cli = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = {
      out: (s) => out.push(s),
      err: (s) => err.push(s),
      isTTY: false,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: testEnv().address,
        TEMPORAL_NAMESPACE: testEnv().namespace,
        GPUPROV_TASK_QUEUE: worker.taskQueue,
        GPUPROV_STATE_DIR: root,
      },
    };
    const code = await fleetCommand.run(args, io);
    return { code, out: out.join(''), err: err.join('') };
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-fleetcli-'));
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([new LocalProvider({ root })]), ssh, owner: 'default' }) });
  });
  afterAll(async () => {
    await cli('down', name).catch(() => undefined);
    await worker?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('rejects a bad shape file before contacting anything', async () => {
    const file = join(root, 'bad.yaml');
    writeFileSync(file, `name: ${name}\ngeneration: 1\ngroups:\n  - { id: a, role: a, count: 1 }\n  - { id: a, role: b, count: -2 }\n`);
    const r = await cli('apply', '-f', file);
    expect(r.code).toBe(2);
    expect(r.err).toContain('duplicate group id');
  });

  it('apply → status converged → apply again is a no-op → down leaves no sshd', async () => {
    const file = join(root, 'fleet.yaml');
    writeFileSync(file, `name: ${name}\ngeneration: 1\ngroups:\n  - id: cpu\n    role: worker\n    count: 2\n    vm: { clouds: [local] }\n`);
    const a = await cli('apply', '-f', file, '--json');
    expect(a.code, a.err + a.out).toBe(0);
    expect(JSON.parse(a.out)).toMatchObject({ ok: true, name, generation: 1 });
    let status: { converged: boolean; slots: { slot: string; ready: boolean }[] } | undefined;
    for (let i = 0; i < 240 && !status?.converged; i++) {
      const s = await cli('status', name, '--json');
      if (s.code === 0) status = JSON.parse(s.out);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status?.slots.map((s) => s.slot)).toEqual([`${name}-cpu-0`, `${name}-cpu-1`]);
    expect(status?.converged).toBe(true);
    expect(countLive(root)).toBe(2);
    const text = await cli('status', name);
    expect(text.out).toContain(`fleet ${name}: generation 1 — converged`);
    expect(JSON.parse((await cli('apply', '-f', file, '--json')).out)).toMatchObject({ changed: false });
    const d = await cli('down', name);
    expect(d.code, d.err).toBe(0);
    expect(countLive(root)).toBe(0);
  });
});
