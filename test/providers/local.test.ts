import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors';
import { LocalProvider, countLive, fromEnv } from '../../src/providers/local';
import type { InstanceSpec, Location, Observed, Offer } from '../../src/core/provider';
import { describeEachSshd, makeClientKey, makeCloud, run, waitFor, type LocalCloud } from './local/helpers';
import { planned, whyNothing } from './planned';

const A: Location = { cloud: 'local', region: 'local-a' };

function spec(vmName: string, publicKeys: string[] = [], key = `${vmName}-key`): InstanceSpec {
  return { vmName, owner: 'local-test', publicKeys, idempotencyKey: key, openPorts: [22] };
}

async function errorOf(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe('local cloud without processes', () => {
  const p = new LocalProvider({ root: '/nonexistent/gpuprov-local-root' });

  it('plans cheapest first, local-a before local-b, CPU types only without a GPU ask', async () => {
    const offers = await planned(p, { vmName: 'v', k8s: false });
    expect(offers.map((o) => `${o.region}/${o.instanceType}/${o.pricePerHour}`)).toEqual([
      'local-a/cpu-small/0.01',
      'local-b/cpu-small/0.01',
      'local-a/cpu-large/0.02',
      'local-b/cpu-large/0.02',
    ]);
    expect(offers.every((o) => o.cloud === 'local' && o.currency === 'USD')).toBe(true);
  });

  it('filters by region, type, price and GPU', async () => {
    expect((await planned(p, { vmName: 'v', k8s: false, regions: ['local-b'] })).map((o) => o.region)).toEqual(['local-b', 'local-b']);
    expect((await planned(p, { vmName: 'v', k8s: false, instanceTypes: ['cpu-large'] })).map((o) => o.instanceType)).toEqual(['cpu-large', 'cpu-large']);
    expect((await planned(p, { vmName: 'v', k8s: false, maxPricePerHour: 0.015 })).map((o) => o.instanceType)).toEqual(['cpu-small', 'cpu-small']);
    const gpu = await planned(p, { vmName: 'v', k8s: false, gpu: { model: 'sim', count: 1 } });
    expect(gpu.map((o) => `${o.region}/${o.instanceType}`)).toEqual(['local-a/gpu-sim-1', 'local-b/gpu-sim-1']);
    expect(gpu[0]?.gpu).toMatchObject({ model: 'SIM', count: 1 });
  });

  it('an unplannable request plans nothing, and says why', async () => {
    const cases: [Parameters<LocalProvider['plan']>[0], RegExp][] = [
      [{ vmName: 'v', k8s: false, gpu: { model: 'H100', count: 1 } }, /no H100 here; GPUs here: SIM/],
      [{ vmName: 'v', k8s: false, gpu: { model: 'SIM', count: 2 } }, /exactly 2 SIM; GPU counts here: 1 \(gpu-sim-1\)/],
      [{ vmName: 'v', k8s: false, regions: ['us-east-1'] }, /regions here: local-a, local-b/],
      [{ vmName: 'v', k8s: false, instanceTypes: ['p5.48xlarge'] }, /types here: cpu-small/],
      [{ vmName: 'v', k8s: false, maxPricePerHour: 0.001 }, /at or below \$0.001\/h; the cheapest is \$0.01\/h/],
    ];
    for (const [req, why] of cases) expect(await whyNothing(p, req)).toMatch(why);
    // SIM:1+ is at least one: the one-GPU type qualifies.
    expect(await planned(p, { vmName: 'v', k8s: false, gpu: { model: 'SIM', count: 1, atLeast: true } })).toHaveLength(2);
  });

  it('capabilities: provider-chosen user, no boot script, no ports, no k8s, no image or disk size, on-demand only', () => {
    expect(p.capabilities()).toEqual({
      bootScript: false,
      openPorts: false,
      k8s: false,
      sshUser: { kind: 'provider' },
      bootTimeoutMs: 60_000,
      pollIntervalMs: 250,
      typicalBootMs: 500,
      image: false,
      diskGb: false,
      markets: ['on-demand'],
    });
  });

  it('fromEnv always returns a provider, rooted at GPUPROV_LOCAL_ROOT or under HOME', () => {
    expect(fromEnv({ GPUPROV_LOCAL_ROOT: '/tmp/x-root' }).root).toBe('/tmp/x-root');
    expect(fromEnv({ HOME: '/home/someone' }).root).toBe('/home/someone/.local/state/gpuprov/local-cloud');
    expect(fromEnv({}).name).toBe('local');
  });

  it('a missing sshd is InvalidRequest telling how to install it', async () => {
    const q = new LocalProvider({ root: '/tmp/gpuprov-no-sshd', sshdPath: '/nonexistent/sbin/sshd' });
    const offer = (await planned(q, { vmName: 'v', k8s: false }))[0]!;
    for (const call of [q.prepare(offer, spec('v')), q.create(offer, {}, spec('v'))]) {
      const err = await errorOf(call);
      expect(err.kind).toBe('InvalidRequest');
      expect(err.message).toContain('apt-get install -y openssh-server');
    }
  });

  it('an unknown GPUPROV_LOCAL_SSHD is InvalidRequest naming it', async () => {
    const q = fromEnv({ GPUPROV_LOCAL_ROOT: '/tmp/gpuprov-bad-sshd-mode', GPUPROV_LOCAL_SSHD: 'dropbear' });
    const offer = (await q.plan({ vmName: 'v', k8s: false }))[0]!;
    const err = await errorOf(q.prepare(offer, spec('v')));
    expect(err.kind).toBe('InvalidRequest');
    expect(err.message).toMatch(/GPUPROV_LOCAL_SSHD must be openssh, builtin .*"dropbear"/);
  });

  it('an offer of another cloud is InvalidRequest', async () => {
    const offer: Offer = { cloud: 'aws', region: 'us-east-1', instanceType: 'p5.48xlarge' };
    expect((await errorOf(p.prepare(offer, spec('v')))).kind).toBe('InvalidRequest');
  });
});

describeEachSshd('local cloud with a real SSH server', (mode) => {
  let cloud: LocalCloud;
  let offer: Offer;
  beforeAll(async () => {
    cloud = await makeCloud(`local-${mode}`, mode);
    offer = (await planned(cloud.provider, { vmName: 'v', k8s: false, regions: ['local-a'] }))[0]!;
  });
  afterAll(async () => {
    await cloud?.close();
  });

  const running = (vm: string): Promise<Observed[]> =>
    waitFor(
      () => cloud.provider.observe(A, vm),
      (o) => o.some((x) => x.status === 'Running'),
    );

  it('create → Running → ssh true works → delete leaves no sshd', async () => {
    const { key, pub } = await makeClientKey(cloud.root);
    const s = spec('ssh-me', [pub]);
    const live0 = countLive(cloud.root);
    const id = await cloud.provider.create(offer, await cloud.provider.prepare(offer, s), s);

    const labels = JSON.parse(await readFile(join(cloud.root, 'instances', id, 'labels.json'), 'utf8'));
    expect(labels).toMatchObject({ vmName: 'ssh-me', owner: 'conformance', region: 'local-a', instanceType: 'cpu-small', idempotencyKey: 'ssh-me-key' });
    expect(Date.parse(labels.createdAt)).toBeGreaterThan(0);
    const config = await readFile(join(cloud.root, 'instances', id, 'sshd_config'), 'utf8');
    expect(config).toMatch(/^ListenAddress 127\.0\.0\.1$/m);
    expect(config).toMatch(/^PasswordAuthentication no$/m);

    const [inst] = await running('ssh-me');
    expect(inst).toMatchObject({ id, status: 'Running', location: A, instanceType: 'cpu-small' });
    expect(inst?.endpoint).toEqual({ host: '127.0.0.1', port: expect.any(Number), user: userInfo().username });
    const ep = inst!.endpoint!;
    const out = await run('ssh', [
      '-p',
      String(ep.port),
      '-i',
      key,
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'ConnectTimeout=10',
      `${ep.user}@${ep.host}`,
      'echo gpuprov-ok',
    ]);
    expect(out.stdout.trim()).toBe('gpuprov-ok');

    const pid = Number(await readFile(join(cloud.root, 'instances', id, 'pid'), 'utf8'));
    expect(cloud.pids()).toContain(pid);
    expect((await readFile(`/proc/${pid}/cmdline`, 'utf8')).includes('/builtin-sshd.ts')).toBe(mode === 'builtin');
    await cloud.provider.delete(A, 'ssh-me', [id]);
    expect(await cloud.provider.observe(A, 'ssh-me')).toEqual([]);
    expect(cloud.pids()).not.toContain(pid);
    expect(countLive(cloud.root)).toBe(live0);
  });

  it('a key not in authorized_keys is refused', async () => {
    const { pub } = await makeClientKey(cloud.root, 'allowed_ed25519');
    const other = await makeClientKey(cloud.root, 'other_ed25519');
    const s = spec('refuse', [pub]);
    await cloud.provider.create(offer, {}, s);
    const ep = (await running('refuse'))[0]!.endpoint!;
    const res = await run('ssh', [
      '-p',
      String(ep.port),
      '-i',
      other.key,
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      `${ep.user}@${ep.host}`,
      'true',
    ]).then(
      () => 'accepted',
      () => 'refused',
    );
    expect(res).toBe('refused');
    await cloud.provider.delete(A, 'refuse', []);
  });

  it('sshd that dies on its own is Failed (sshd exited); delete then removes it', async () => {
    const s = spec('dies');
    const id = await cloud.provider.create(offer, {}, s);
    await running('dies');
    const pid = Number(await readFile(join(cloud.root, 'instances', id, 'pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    const obs = await waitFor(
      () => cloud.provider.observe(A, 'dies'),
      (o) => o[0]?.status === 'Failed',
    );
    expect(obs).toEqual([expect.objectContaining({ id, status: 'Failed', reason: expect.stringContaining('sshd exited') })]);
    await cloud.provider.delete(A, 'dies', [id]);
    expect(await cloud.provider.observe(A, 'dies')).toEqual([]);
  });

  it('observe is scoped by VM name and region', async () => {
    const s = spec('scoped');
    const id = await cloud.provider.create(offer, {}, s);
    expect((await cloud.provider.observe(A, 'scoped')).map((o) => o.id)).toEqual([id]);
    expect(await cloud.provider.observe({ cloud: 'local', region: 'local-b' }, 'scoped')).toEqual([]);
    expect(await cloud.provider.observe(A, 'scoped-other')).toEqual([]);
    // A delete at another region leaves it alone, even when given its id.
    await cloud.provider.delete({ cloud: 'local', region: 'local-b' }, 'scoped', [id]);
    expect((await cloud.provider.observe(A, 'scoped')).map((o) => o.id)).toEqual([id]);
    await cloud.provider.delete(A, 'scoped', []);
    expect(await cloud.provider.observe(A, 'scoped')).toEqual([]);
  });

  it('native idempotency: the same key returns the live instance; after delete it makes a new one', async () => {
    const s = spec('idem-native');
    const live0 = countLive(cloud.root);
    const a = await cloud.provider.create(offer, {}, s);
    const b = await cloud.provider.create(offer, {}, s);
    expect(b).toBe(a);
    expect(countLive(cloud.root)).toBe(live0 + 1);
    const c = await cloud.provider.create(offer, {}, { ...s, idempotencyKey: 'another-attempt' });
    expect(c).not.toBe(a);
    expect(countLive(cloud.root)).toBe(live0 + 2);
    await cloud.provider.delete(A, s.vmName, [a]);
    expect(countLive(cloud.root)).toBe(live0);
    const d = await cloud.provider.create(offer, {}, s);
    expect(d).not.toBe(a);
    await cloud.provider.delete(A, s.vmName, []);
    await cloud.provider.cleanup(A, s.vmName);
    expect(countLive(cloud.root)).toBe(live0);
  });

  it('prepare is idempotent and makes the per-VM directory; cleanup removes it, twice', async () => {
    const s = spec('prep');
    const a = await cloud.provider.prepare(offer, s);
    expect(await cloud.provider.prepare(offer, s)).toEqual(a);
    const dir = join(cloud.root, 'vms', 'local-a', 'conformance', 'prep');
    expect((await stat(dir)).isDirectory()).toBe(true);
    await cloud.provider.cleanup(A, 'prep');
    await expect(stat(dir)).rejects.toThrow();
    await cloud.provider.cleanup(A, 'prep');
  });

  it('a create that crashed before starting sshd is Failed after a while, and delete removes it', async () => {
    const dir = join(cloud.root, 'instances', 'lc-00000000abcd');
    await mkdir(dir, { recursive: true });
    const createdAt = new Date(Date.now() - 120_000).toISOString();
    await writeFile(
      join(dir, 'labels.json'),
      JSON.stringify({ vmName: 'crashed', owner: 'conformance', region: 'local-a', instanceType: 'cpu-small', idempotencyKey: 'k', createdAt }),
    );
    expect(await cloud.provider.observe(A, 'crashed')).toEqual([
      expect.objectContaining({ id: 'lc-00000000abcd', status: 'Failed', reason: expect.stringContaining('create did not finish') }),
    ]);
    await cloud.provider.delete(A, 'crashed', []);
    expect(await cloud.provider.observe(A, 'crashed')).toEqual([]);
  });

  it('a delete that crashed after hiding the instance is finished by the next delete (no leaked sshd)', async () => {
    const live0 = countLive(cloud.root);
    const id = await cloud.provider.create(offer, {}, spec('half-deleted'));
    await running('half-deleted');
    await mkdir(join(cloud.root, 'trash'), { recursive: true });
    await rename(join(cloud.root, 'instances', id), join(cloud.root, 'trash', `${id}.${Date.now() - 60_000}.dead`));
    expect(await cloud.provider.observe(A, 'half-deleted')).toEqual([]);
    expect(countLive(cloud.root)).toBe(live0 + 1);
    await cloud.provider.delete(A, 'anything', []);
    expect(countLive(cloud.root)).toBe(live0);
  });
});
