import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Location, Observed, Offer } from '../../src/core/provider';
import { describeWithSshd, freshId, makeCloud, run, waitFor, type LocalCloud } from './local/helpers';
import { planned } from './planned';

const A: Location = { cloud: 'local', region: 'local-a' };
const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const CHILD = join(__dirname, 'local', 'child.ts');

interface ChildResult<T> {
  ok?: T;
  error?: { kind: string; message: string };
}

describeWithSshd('local cloud shared by two processes', () => {
  let cloud: LocalCloud;
  let offer: Offer;
  const child = async <T>(op: object): Promise<ChildResult<T>> => {
    const { stdout } = await run(TSX, [CHILD, cloud.root, cloud.faultsFile, JSON.stringify(op)], { timeout: 60_000 });
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ChildResult<T>;
  };

  beforeAll(async () => {
    cloud = await makeCloud('process');
    offer = (await planned(cloud.provider, { vmName: 'v', k8s: false, regions: ['local-a'] }))[0]!;
  });
  afterAll(async () => {
    await cloud?.close();
  });

  it('another process observes the instances this one created', async () => {
    const s = { vmName: 'shared', owner: 'process-test', publicKeys: [], idempotencyKey: 'shared-1', openPorts: [22] };
    const id = await cloud.provider.create(offer, {}, s);
    const mine = await waitFor(
      () => cloud.provider.observe(A, 'shared'),
      (o) => o[0]?.status === 'Running',
    );
    const theirs = await child<Observed[]>({ op: 'observe', at: A, vmName: 'shared' });
    expect(theirs.ok).toEqual(mine);
    expect(theirs.ok?.map((o) => o.id)).toEqual([id]);
    await cloud.provider.delete(A, 'shared', []);
    expect((await child<Observed[]>({ op: 'observe', at: A, vmName: 'shared' })).ok).toEqual([]);
  });

  it('an instance created by a process that has exited lives on, and this process deletes it', async () => {
    const live0 = cloud.pids().length;
    const s = { vmName: 'orphan', owner: 'process-test', publicKeys: [], idempotencyKey: 'orphan-1', openPorts: [22] };
    const res = await child<string>({ op: 'create', offer, spec: s });
    expect(typeof res.ok).toBe('string');
    const obs = await waitFor(
      () => cloud.provider.observe(A, 'orphan'),
      (o) => o[0]?.status === 'Running',
    );
    expect(obs.map((o) => [o.id, o.status])).toEqual([[res.ok, 'Running']]);
    expect(cloud.pids().length).toBe(live0 + 1);
    await cloud.provider.delete(A, 'orphan', [res.ok!]);
    expect(cloud.pids().length).toBe(live0);
  });

  it('fault counters are shared across processes', async () => {
    await cloud.setFaults([{ id: freshId(), primitive: 'plan', error: 'Capacity', times: 1 }]);
    expect((await child({ op: 'plan' })).error?.kind).toBe('Capacity');
    expect((await planned(cloud.provider, { vmName: 'v', k8s: false })).length).toBeGreaterThan(0);
    expect((await child<Offer[]>({ op: 'plan' })).ok?.length).toBeGreaterThan(0);
  });
});
