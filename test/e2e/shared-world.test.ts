/**
 * Two people, one cloud account: two independent installs of the embedded default (own HOME, own
 * dev server and worker, own state) share one local-cloud root, as teammates share a team
 * account. Counted at the cloud (instance directories and live sshd processes), never from what
 * either install believes. Then: an instance tagged with an install's id that it never recorded
 * (made before the ledger, or by another tool) is unknown, not swept; `--recover` relaunches and
 * `ssh NAME` follows the new instance.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromEnv as localFromEnv } from '../../src/providers/local';
import { freePort } from '../../src/ports';
import { requireServer, requireTool } from '../harness/temporal';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const haveSshd = existsSync('/usr/sbin/sshd');
const GRACE = '3s';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Install {
  home: string;
  env: NodeJS.ProcessEnv;
}
interface Ran {
  code: number;
  out: string;
  err: string;
}

async function provision(who: Install, ...args: string[]): Promise<Ran> {
  try {
    const r = await run(process.execPath, [join(ROOT, 'bin', 'provision.js'), ...args], { env: who.env, cwd: ROOT, timeout: 240_000 });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? '' };
  }
}

/** `ssh NAME CMD` as the user types it: ~/.ssh/config Includes the entry gpuprov wrote (its ProxyCommand finds the VM). */
async function ssh(who: Install, name: string, cmd: string): Promise<Ran> {
  try {
    // -F: OpenSSH finds ~/.ssh/config by the passwd entry, not $HOME, and each install has its own HOME.
    const r = await run('ssh', ['-F', join(who.home, '.ssh', 'config'), '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=15', name, cmd], {
      env: who.env,
      timeout: 60_000,
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? '' };
  }
}

/** The instances at the cloud: every instance directory's labels (vmName, owner) and whether its sshd runs. */
function atCloud(root: string): { id: string; vmName: string; owner: string; live: boolean }[] {
  const dir = join(root, 'instances');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((id) => {
    const labels = join(dir, id, 'labels.json');
    if (!existsSync(labels)) return [];
    const l = JSON.parse(readFileSync(labels, 'utf8')) as { vmName: string; owner: string };
    const pidFile = join(dir, id, 'pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : NaN;
    return [{ id, vmName: l.vmName, owner: l.owner, live: Number.isInteger(pid) && existsSync(`/proc/${pid}`) }];
  });
}

const deploymentOf = (who: Install): string => readFileSync(join(who.env.GPUPROV_STATE_DIR!, 'deployment-id'), 'utf8').trim();

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('two installs share one cloud account', () => {
  const cloudRoot = mkdtempSync(join(tmpdir(), 'gpuprov-shared-cloud-'));
  let a: Install;
  let b: Install;

  const install = async (tag: string): Promise<Install> => {
    const home = mkdtempSync(join(tmpdir(), `gpuprov-shared-${tag}-`));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    return {
      home,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        GPUPROV_STATE_DIR: join(home, 'state'),
        TEMPORAL_CLI_PATH: inject('temporalCliPath'),
        GPUPROV_EMBEDDED_PORT: String(await freePort()),
        GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
        GPUPROV_LOCAL_ROOT: cloudRoot,
        GPUPROV_ORPHAN_GRACE: GRACE,
      },
    };
  };

  beforeAll(async () => {
    a = await install('a');
    b = await install('b');
  });
  afterAll(async () => {
    for (const who of [a, b]) if (who) await provision(who, 'server', 'stop');
  });

  it('each install has its own deployment id; different names: nothing of the other is deleted, adopted, orphaned or lost, past the grace', async () => {
    const [sa, sb] = await Promise.all([provision(a, 'start', '--name', 'a1'), provision(b, 'start', '--name', 'b1')]);
    expect(sa.code, sa.err).toBe(0);
    expect(sb.code, sb.err).toBe(0);
    expect(deploymentOf(a)).toMatch(/^dev-[0-9a-f]{10}$/);
    expect(deploymentOf(b)).toMatch(/^dev-[0-9a-f]{10}$/);
    expect(deploymentOf(a)).not.toBe(deploymentOf(b));
    // Past the grace and over two Ready-cadence looks (20 s each) of both watchers.
    await sleep(45_000);
    for (const [who, name] of [
      [a, 'a1'],
      [b, 'b1'],
    ] as const) {
      const st = await provision(who, 'status', name, '--json');
      expect(JSON.parse(st.out)).toMatchObject({ stage: 'ready', deployment: deploymentOf(who) });
      const dry = JSON.parse((await provision(who, 'sweep', '--dry-run', '--json')).out) as { orphans: unknown[]; unknown: unknown[] };
      expect(dry).toMatchObject({ orphans: [], unknown: [] });
      expect((await ssh(who, name, 'echo up')).out.trim()).toBe('up');
    }
    const live = atCloud(cloudRoot).filter((i) => i.live);
    expect(live.map((i) => i.vmName).sort()).toEqual(['a1', 'b1']);
    const list = await provision(a, 'list');
    expect(list.out).toContain(`deployment ${deploymentOf(a)}`);
    // The NAME column (a deployment id like dev-…11b1… may contain the letters).
    expect(list.out.split('\n').map((l) => l.split(/\s+/)[0])).not.toContain('b1');
  });

  it('the same name: each gets its own instance; down in one leaves the other Ready and reachable', async () => {
    const [sa, sb] = await Promise.all([provision(a, 'start', '--name', 'same'), provision(b, 'start', '--name', 'same')]);
    expect(sa.code, sa.err).toBe(0);
    expect(sb.code, sb.err).toBe(0);
    const same = atCloud(cloudRoot).filter((i) => i.vmName === 'same' && i.live);
    expect(same.map((i) => i.owner).sort()).toEqual([deploymentOf(a), deploymentOf(b)].sort());
    expect((await ssh(a, 'same', 'echo a')).out.trim()).toBe('a');
    const down = await provision(a, 'down', 'same');
    expect(down.code, down.err).toBe(0);
    const left = atCloud(cloudRoot).filter((i) => i.vmName === 'same' && i.live);
    expect(left.map((i) => i.owner)).toEqual([deploymentOf(b)]);
    expect(JSON.parse((await provision(b, 'status', 'same', '--json')).out)).toMatchObject({ stage: 'ready' });
    expect((await ssh(b, 'same', 'echo b')).out.trim()).toBe('b');
    expect((await provision(b, 'down', 'same')).code).toBe(0);
  });

  it("an instance with an install's id that it never recorded (from before the ledger) is unknown: listed, not swept, until the operator names it", async () => {
    const legacy = localFromEnv({ GPUPROV_LOCAL_ROOT: cloudRoot }, { deployment: deploymentOf(a) });
    const offer = (await legacy.plan({ vmName: 'legacy', k8s: false }))[0]!;
    const spec = { vmName: 'legacy', owner: deploymentOf(a), publicKeys: [], idempotencyKey: 'made-by-hand', openPorts: [22] };
    await legacy.create(offer, await legacy.prepare(offer, spec), spec);
    // The watcher of that region must run: a1 may live in another region, so launch one there.
    const there = await provision(a, 'start', '--name', 'near', '--region', offer.region);
    expect(there.code, there.err).toBe(0);
    await sleep(30_000);
    const dry = JSON.parse((await provision(a, 'sweep', '--dry-run', '--json')).out) as { orphans: { vmName: string }[]; unknown: { vmName: string }[] };
    expect(dry.unknown.map((u) => u.vmName)).toEqual(['legacy']);
    expect(dry.orphans).toEqual([]);
    expect(atCloud(cloudRoot).filter((i) => i.vmName === 'legacy' && i.live)).toHaveLength(1);
    const all = await provision(a, 'list', '--all');
    expect(all.out).toMatch(/legacy\s+unknown/);
    expect(all.out).toContain('sweep --include-unknown legacy');
    // A plain sweep leaves it; naming it deletes it.
    await provision(a, 'sweep');
    expect(atCloud(cloudRoot).filter((i) => i.vmName === 'legacy' && i.live)).toHaveLength(1);
    const named = await provision(a, 'sweep', '--include-unknown', 'legacy', '--json');
    expect(JSON.parse(named.out)).toMatchObject({ ok: true, swept: [{ vmName: 'legacy', ok: true, by: 'operator' }] });
    expect(atCloud(cloudRoot).filter((i) => i.vmName === 'legacy')).toHaveLength(0);
    expect((await provision(a, 'down', 'near')).code).toBe(0);
  });

  it('--recover: the instance dies behind our back, the VM is Ready again, ssh NAME reaches the new instance, one instance of that name, down leaves nothing', async () => {
    const start = await provision(a, 'start', '--name', 'rec', '--recover');
    expect(start.code, start.err).toBe(0);
    const [first] = atCloud(cloudRoot).filter((i) => i.vmName === 'rec' && i.live);
    expect(first).toBeDefined();
    expect((await ssh(a, 'rec', 'echo first')).out.trim()).toBe('first');
    process.kill(Number(readFileSync(join(cloudRoot, 'instances', first!.id, 'pid'), 'utf8').trim()), 'SIGKILL');
    let s: { stage: string; instanceIds: string[]; recovered?: { count: number } } | undefined;
    for (let i = 0; i < 120; i++) {
      await sleep(1_000);
      s = JSON.parse((await provision(a, 'status', 'rec', '--json')).out) as typeof s;
      if (s?.stage === 'ready' && (s.recovered?.count ?? 0) >= 1) break;
    }
    expect(s).toMatchObject({ stage: 'ready', recovered: { count: 1 } });
    expect(s!.instanceIds).not.toContain(first!.id);
    // No command in between: the ssh entry's ProxyCommand finds the new endpoint and host key.
    const again = await ssh(a, 'rec', 'echo second');
    expect(again.out.trim(), again.err).toBe('second');
    expect(
      atCloud(cloudRoot)
        .filter((i) => i.vmName === 'rec' && i.live)
        .map((i) => i.id),
    ).toEqual(s!.instanceIds);
    expect((await provision(a, 'down', 'rec')).code).toBe(0);
    expect(atCloud(cloudRoot).filter((i) => i.vmName === 'rec')).toHaveLength(0);
  });

  it('in the end nothing is left at the cloud', async () => {
    for (const [who, name] of [
      [a, 'a1'],
      [b, 'b1'],
    ] as const)
      expect((await provision(who, 'down', name)).code).toBe(0);
    expect(atCloud(cloudRoot)).toEqual([]);
  });
});
