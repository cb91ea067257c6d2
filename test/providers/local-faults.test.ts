import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { ERROR_KINDS, ProviderError } from '../../src/core/errors';
import { LocalProvider } from '../../src/providers/local';
import type { InstanceSpec, Location, Offer } from '../../src/core/provider';
import { describeWithSshd, freshId, makeCloud, sleep, waitFor, type LocalCloud } from './local/helpers';
import { planned } from './planned';

const A: Location = { cloud: 'local', region: 'local-a' };
let seq = 0;
function spec(vmName: string): InstanceSpec {
  seq += 1;
  return { vmName, owner: 'faults-test', publicKeys: [], idempotencyKey: `${vmName}-${seq}`, openPorts: [22] };
}

async function errorOf(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describeWithSshd('local cloud fault file', () => {
  let cloud: LocalCloud;
  let offers: Offer[];
  const offer = (region: string, type = 'cpu-small'): Offer => offers.find((o) => o.region === region && o.instanceType === type)!;

  beforeAll(async () => {
    cloud = await makeCloud('faults');
    offers = await planned(cloud.provider, { vmName: 'v', k8s: false });
  });
  beforeEach(async () => {
    await cloud.setFaults([]);
  });
  afterAll(async () => {
    await cloud?.close();
  });

  it('every error kind at create, scoped to a region, creates nothing there; the other region works', async () => {
    const live0 = cloud.pids().length;
    for (const kind of ERROR_KINDS) {
      await cloud.setFaults([{ id: freshId(), region: 'local-a', error: kind }]);
      const s = spec(`err-${kind.toLowerCase()}`);
      const err = await errorOf(cloud.provider.create(offer('local-a'), {}, s));
      expect(err.kind, kind).toBe(kind);
      expect(err.block, kind).toBe(kind === 'Quota' ? 'region' : undefined);
      expect(await cloud.provider.observe(A, s.vmName)).toEqual([]);
    }
    expect(cloud.pids().length).toBe(live0);
    const s = spec('other-region');
    const id = await cloud.provider.create(offer('local-b'), {}, s);
    expect((await cloud.provider.observe({ cloud: 'local', region: 'local-b' }, s.vmName)).map((o) => o.id)).toEqual([id]);
    await cloud.provider.delete({ cloud: 'local', region: 'local-b' }, s.vmName, [id]);
    expect(cloud.pids().length).toBe(live0);
  });

  it('a rule scoped to an instance type spares the other types', async () => {
    await cloud.setFaults([{ instanceType: 'cpu-large', error: 'Capacity' }]);
    expect((await errorOf(cloud.provider.create(offer('local-a', 'cpu-large'), {}, spec('typed')))).kind).toBe('Capacity');
    const id = await cloud.provider.create(offer('local-a', 'cpu-small'), {}, spec('typed'));
    await cloud.provider.delete(A, 'typed', [id]);
  });

  it('faults at plan, prepare, observe, delete and cleanup; error defaults to Transient', async () => {
    const s = spec('prims');
    await cloud.setFaults([{ primitive: 'plan', error: 'Credentials' }]);
    expect((await errorOf(planned(cloud.provider, { vmName: 'v', k8s: false }))).kind).toBe('Credentials');
    await cloud.setFaults([{ primitive: 'prepare', error: 'InvalidRequest', region: 'local-a' }]);
    expect((await errorOf(cloud.provider.prepare(offer('local-a'), s))).kind).toBe('InvalidRequest');
    await cloud.provider.prepare(offer('local-b'), s);
    for (const primitive of ['observe', 'delete', 'cleanup'] as const) {
      await cloud.setFaults([{ primitive }]);
      const call =
        primitive === 'observe'
          ? cloud.provider.observe(A, s.vmName)
          : primitive === 'delete'
            ? cloud.provider.delete(A, s.vmName, [])
            : cloud.provider.cleanup(A, s.vmName);
      expect((await errorOf(call)).kind, primitive).toBe('Transient');
    }
    await cloud.setFaults([]);
    await cloud.provider.cleanup({ cloud: 'local', region: 'local-b' }, s.vmName);
  });

  it('ambiguous create: the instance exists (sshd running) yet create throws; observe finds it; delete by identity', async () => {
    const live0 = cloud.pids().length;
    for (const error of [undefined, 'Capacity'] as const) {
      await cloud.setFaults([
        error === undefined ? { id: freshId(), ambiguousCreate: true, times: 1 } : { id: freshId(), ambiguousCreate: true, error, times: 1 },
      ]);
      const s = spec(`ambiguous-${error ?? 'default'}`);
      const err = await errorOf(cloud.provider.create(offer('local-a'), {}, s));
      expect(err.kind).toBe(error ?? 'Transient');
      expect(cloud.pids().length).toBe(live0 + 1);
      const obs = await waitFor(
        () => cloud.provider.observe(A, s.vmName),
        (o) => o[0]?.status === 'Running',
      );
      expect(obs).toHaveLength(1);
      expect(obs[0]?.endpoint?.port).toBeGreaterThan(0);
      await cloud.provider.delete(A, s.vmName, []);
      expect(await cloud.provider.observe(A, s.vmName)).toEqual([]);
      expect(cloud.pids().length).toBe(live0);
    }
  });

  it('boot delay keeps the instance Pending (sshd alive) until createdAt + delay, then Running', async () => {
    await cloud.setFaults([{ bootDelayMs: 1500, region: 'local-a' }]);
    const s = spec('slow');
    const t0 = Date.now();
    const id = await cloud.provider.create(offer('local-a'), {}, s);
    await sleep(500); // long enough for sshd itself to listen
    const early = await cloud.provider.observe(A, s.vmName);
    expect(early).toEqual([expect.objectContaining({ id, status: 'Pending' })]);
    expect(early[0]?.endpoint).toBeUndefined();
    const later = await waitFor(
      () => cloud.provider.observe(A, s.vmName),
      (o) => o[0]?.status === 'Running',
    );
    expect(later[0]?.status).toBe('Running');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    await cloud.provider.delete(A, s.vmName, [id]);
  });

  it('delete fails N times (Transient), the instance stays, then delete succeeds', async () => {
    const s = spec('stubborn');
    const id = await cloud.provider.create(offer('local-a'), {}, s);
    const live = cloud.pids().length;
    await cloud.setFaults([{ id: freshId(), primitive: 'delete', times: 3 }]);
    for (let i = 0; i < 3; i++) expect((await errorOf(cloud.provider.delete(A, s.vmName, [id]))).kind).toBe('Transient');
    expect((await cloud.provider.observe(A, s.vmName)).map((o) => o.id)).toEqual([id]);
    expect(cloud.pids().length).toBe(live);
    await cloud.provider.delete(A, s.vmName, [id]);
    expect(await cloud.provider.observe(A, s.vmName)).toEqual([]);
    expect(cloud.pids().length).toBe(live - 1);
  });

  it('observe fails transiently N times, then answers', async () => {
    await cloud.setFaults([{ id: freshId(), primitive: 'observe', region: 'local-a', times: 2 }]);
    expect((await errorOf(cloud.provider.observe(A, 'flaky'))).kind).toBe('Transient');
    // Region-scoped: another region is not affected and does not use up the count.
    expect(await cloud.provider.observe({ cloud: 'local', region: 'local-b' }, 'flaky')).toEqual([]);
    expect((await errorOf(cloud.provider.observe(A, 'flaky'))).kind).toBe('Transient');
    expect(await cloud.provider.observe(A, 'flaky')).toEqual([]);
  });

  it('times counters live on disk: two providers on one root share them', async () => {
    const other = new LocalProvider({ root: cloud.root, faultsFile: cloud.faultsFile });
    await cloud.setFaults([{ id: freshId(), primitive: 'plan', error: 'Unavailable', times: 2 }]);
    expect((await errorOf(planned(cloud.provider, { vmName: 'v', k8s: false }))).kind).toBe('Unavailable');
    expect((await errorOf(planned(other, { vmName: 'v', k8s: false }))).kind).toBe('Unavailable');
    expect((await planned(cloud.provider, { vmName: 'v', k8s: false })).length).toBeGreaterThan(0);
    expect((await planned(other, { vmName: 'v', k8s: false })).length).toBeGreaterThan(0);
  });

  it('a bad fault file is InvalidRequest saying what is wrong', async () => {
    await writeFile(cloud.faultsFile, '{ not json');
    expect((await errorOf(planned(cloud.provider, { vmName: 'v', k8s: false }))).message).toMatch(/not JSON/);
    await writeFile(cloud.faultsFile, JSON.stringify({ rules: [{ error: 'Boom' }] }));
    expect((await errorOf(planned(cloud.provider, { vmName: 'v', k8s: false }))).kind).toBe('InvalidRequest');
    await writeFile(cloud.faultsFile, JSON.stringify({ rules: [{ bootDelayMs: 5, error: 'Capacity' }] }));
    expect((await errorOf(planned(cloud.provider, { vmName: 'v', k8s: false }))).message).toMatch(/bootDelayMs/);
    await writeFile(cloud.faultsFile, JSON.stringify({ rules: [{ primitive: 'delete', ambiguousCreate: true }] }));
    expect((await errorOf(planned(cloud.provider, { vmName: 'v', k8s: false }))).message).toMatch(/create only/);
  });
});
