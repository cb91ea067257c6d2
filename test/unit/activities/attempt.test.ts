/**
 * The merged cloud calls against the FakeProvider: prepareAndCreate (prepare failures say so;
 * a retry adopts) and releaseAt (delete, wait until gone, clean up; deadline; cleanup-only).
 */
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAttemptActivities, goneDelays, type ReleaseInput } from '../../../src/activities/attempt';
import { ProviderRegistry } from '../../../src/providers/registry';
import type { InstanceSpec, Location, Observed } from '../../../src/core/provider';
import { defaultFakeOffers, FakeProvider } from '../../harness/fake-provider';

const offer = defaultFakeOffers()[0]!;
const at: Location = { cloud: 'fake', region: offer.region };
const spec: InstanceSpec = { vmName: 'm1', owner: 'default', publicKeys: [], idempotencyKey: 'wf/run/0', openPorts: [] };

function setup(fake: FakeProvider) {
  let t = 0;
  const slept: number[] = [];
  const acts = createAttemptActivities({
    registry: new ProviderRegistry([fake]),
    publicKey: 'ssh-ed25519 AAAAworker',
    now: () => t,
    sleep: async (ms) => void (slept.push(ms), (t += ms)),
    heartbeat: () => undefined,
  });
  const release = (o: Partial<ReleaseInput> = {}): Promise<void> =>
    acts.releaseAt({ at, vmName: 'm1', instanceIds: [], mode: 'full', pollIntervalMs: 1_000, deadlineAtMs: 60_000, ...o });
  return { acts, release, slept };
}

describe('prepareAndCreate', () => {
  let fake: FakeProvider;
  beforeEach(() => (fake = new FakeProvider()));

  it('prepares, then creates once; a second call (a retry) adopts the same instance', async () => {
    const { acts } = setup(fake);
    const a = await acts.prepareAndCreate(offer, spec);
    const b = await acts.prepareAndCreate(offer, spec);
    expect(a).toEqual({ instanceId: 'fake-1', adopted: false });
    expect(b).toEqual({ instanceId: 'fake-1', adopted: true });
    expect(fake.callsOf('create')).toHaveLength(1);
    expect(fake.sideResources()).toEqual(['m1@fake-a']);
  });

  it('a failed prepare step says phase prepare (nothing created); a failed create does not', async () => {
    const { acts } = setup(fake);
    fake.script({ primitive: 'prepare', error: 'Unavailable', times: 1 }, { primitive: 'create', error: 'Capacity', times: 1 });
    const p = await acts.prepareAndCreate(offer, spec).catch((e: unknown) => e);
    expect(p).toBeInstanceOf(ApplicationFailure);
    expect(p).toMatchObject({ type: 'Unavailable', nonRetryable: true, details: [{ kind: 'Unavailable', phase: 'prepare' }] });
    const c = await acts.prepareAndCreate(offer, spec).catch((e: unknown) => e);
    expect(c).toMatchObject({ type: 'Capacity', details: [{ kind: 'Capacity' }] });
    expect((c as ApplicationFailure).details?.[0]).not.toHaveProperty('phase');
    expect(fake.liveCount()).toBe(0);
  });
});

describe('prepareAndCreate: a create refused for room is released by the activity itself', () => {
  function acting(fake: FakeProvider, noted: string[]) {
    return createAttemptActivities({
      registry: new ProviderRegistry([fake]),
      publicKey: 'ssh-ed25519 AAAAworker',
      noteCapacity: async (taskQueue, o) => void noted.push(`${taskQueue} ${o.cloud}/${o.region}/${o.instanceType}`),
    });
  }
  const run = (acts: ReturnType<typeof acting>): Promise<unknown> =>
    new MockActivityEnvironment({ taskQueue: 'main-q-cloud-fake' }).run(() => acts.prepareAndCreate(offer, spec)).catch((e: unknown) => e);

  it('Capacity: its side resources cleaned up, the capacity memory told on the main queue, the failure marked released', async () => {
    const fake = new FakeProvider();
    const noted: string[] = [];
    fake.script({ primitive: 'create', error: 'Capacity', times: 1 });
    const err = await run(acting(fake, noted));
    expect(err).toMatchObject({ type: 'Capacity', nonRetryable: true, details: [{ kind: 'Capacity', released: true }] });
    expect(fake.sideResources()).toEqual([]);
    expect(fake.callsOf('cleanup')).toHaveLength(1);
    expect(noted).toEqual([`main-q fake/${offer.region}/${offer.instanceType}`]);
  });

  it('a release that fails here leaves the failure unmarked (the workflow compensates); a kind that aborts is never released here', async () => {
    const fake = new FakeProvider();
    const noted: string[] = [];
    fake.script({ primitive: 'create', error: 'Capacity', times: 1 }, { primitive: 'cleanup', error: 'Transient', times: 1 });
    const err = await run(acting(fake, noted));
    expect(err).toMatchObject({ type: 'Capacity', details: [{ kind: 'Capacity' }] });
    expect((err as ApplicationFailure).details?.[0]).not.toHaveProperty('released');
    expect(fake.sideResources()).toEqual(['m1@fake-a']);
    const cleanups = fake.callsOf('cleanup').length;
    fake.script({ primitive: 'create', error: 'InvalidRequest', times: 1 });
    const invalid = await run(acting(fake, noted));
    expect((invalid as ApplicationFailure).details?.[0]).not.toHaveProperty('released');
    expect(fake.callsOf('cleanup')).toHaveLength(cleanups);
  });
});

describe('releaseAt', () => {
  it('deletes, sees nothing left, cleans up: no wait', async () => {
    const fake = new FakeProvider();
    const { acts, release, slept } = setup(fake);
    await acts.prepareAndCreate(offer, spec);
    await release({ instanceIds: ['fake-1'] });
    expect(fake.liveCount()).toBe(0);
    expect(fake.sideResources()).toEqual([]);
    expect(slept).toEqual([]);
    expect(fake.calls.map((c) => c.primitive)).toEqual(['observe', 'prepare', 'create', 'delete', 'observe', 'cleanup']);
  });

  it('waits while instances are still listed, re-deletes a live one every third look, cleans up only once none is left', async () => {
    const fake = new FakeProvider();
    const listed: Observed[][] = [
      [{ id: 'i-1', status: 'Running', location: at, instanceType: 'gpu-1' }],
      [{ id: 'i-1', status: 'Running', location: at, instanceType: 'gpu-1' }],
      [{ id: 'i-1', status: 'Running', location: at, instanceType: 'gpu-1' }],
      [{ id: 'i-1', status: 'Terminating', location: at, instanceType: 'gpu-1' }],
      [],
    ];
    const calls: string[] = [];
    fake.observe = async () => (calls.push('observe'), listed.shift() ?? []);
    const del = fake.delete.bind(fake);
    fake.delete = async (...a) => (calls.push('delete'), del(...a));
    const clean = fake.cleanup.bind(fake);
    fake.cleanup = async (...a) => (calls.push('cleanup'), clean(...a));
    const { release, slept } = setup(fake);
    await release();
    expect(calls).toEqual(['delete', 'observe', 'observe', 'observe', 'delete', 'observe', 'observe', 'cleanup']);
    expect(slept).toEqual([0, 1, 2, 3].map(goneDelays(1_000)));
  });

  it('past the deadline it fails for good and never cleans up; cleanup-only mode touches no instance', async () => {
    const fake = new FakeProvider();
    fake.observe = async () => [{ id: 'i-1', status: 'Terminating', location: at, instanceType: 'gpu-1' }];
    const { release } = setup(fake);
    const err = await release({ deadlineAtMs: 2_000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'NotReady', nonRetryable: true });
    expect((err as Error).message).toMatch(/still present at the deadline: i-1=Terminating/);
    expect(fake.callsOf('cleanup')).toHaveLength(0);

    const other = new FakeProvider();
    await setup(other).release({ mode: 'cleanup' });
    expect(other.calls.map((c) => c.primitive)).toEqual(['cleanup']);
  });

  it('a transient delete error fails the attempt (retryable) before anything is cleaned', async () => {
    const fake = new FakeProvider();
    fake.script({ primitive: 'delete', error: 'Transient', times: 1 });
    const err = await setup(fake)
      .release()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'Transient', nonRetryable: false });
    expect(fake.callsOf('cleanup')).toHaveLength(0);
  });

  it('in an activity context it heartbeats while it waits (real timers)', async () => {
    const fake = new FakeProvider();
    const until = Date.now() + 5_600;
    fake.observe = async () => (Date.now() < until ? [{ id: 'i-1', status: 'Terminating', location: at, instanceType: 'gpu-1' }] : []);
    const acts = createAttemptActivities({ registry: new ProviderRegistry([fake]), publicKey: 'ssh-ed25519 AAAAworker' });
    const env = new MockActivityEnvironment();
    let beats = 0;
    env.on('heartbeat', () => (beats += 1));
    const input: ReleaseInput = { at, vmName: 'm1', instanceIds: [], mode: 'full', pollIntervalMs: 1_000, deadlineAtMs: Date.now() + 60_000 };
    await env.run((i: ReleaseInput) => acts.releaseAt(i), input);
    expect(beats).toBeGreaterThanOrEqual(1);
    expect(fake.callsOf('cleanup')).toHaveLength(1);
  }, 20_000);

  it('an attempt that answered Capacity: the release also tells the capacity memory, on its first try only', async () => {
    const noted: string[] = [];
    const acts = createAttemptActivities({
      registry: new ProviderRegistry([new FakeProvider()]),
      publicKey: 'ssh-ed25519 AAAAworker',
      noteCapacity: async (taskQueue, o) => void noted.push(`${taskQueue} ${o.cloud}/${o.region}/${o.instanceType}`),
    });
    const input: ReleaseInput = {
      at,
      vmName: 'm1',
      instanceIds: [],
      mode: 'cleanup',
      pollIntervalMs: 1_000,
      deadlineAtMs: Date.now() + 60_000,
      capacity: { offer: { cloud: 'fake', region: offer.region, instanceType: offer.instanceType }, taskQueue: 'main-q' },
    };
    await new MockActivityEnvironment({ attempt: 1 }).run((i: ReleaseInput) => acts.releaseAt(i), input);
    await new MockActivityEnvironment({ attempt: 2 }).run((i: ReleaseInput) => acts.releaseAt(i), input);
    await new MockActivityEnvironment({ attempt: 1 }).run((i: ReleaseInput) => acts.releaseAt(i), { ...input, capacity: undefined });
    expect(noted).toEqual([`main-q fake/${offer.region}/${offer.instanceType}`]);
  });

  it('exact: deletes only the given ids and keeps the side resources while another instance of the name lives; keepIds: never deletes those', async () => {
    const fake = new FakeProvider();
    const { acts, release } = setup(fake);
    const old = await acts.prepareAndCreate(offer, spec);
    const fresh = await acts.prepareAndCreate(offer, { ...spec, idempotencyKey: 'wf/run2/0', besides: [old.instanceId] });
    await release({ instanceIds: [], idempotencyKeys: ['wf/run2/0'], keepIds: [old.instanceId] });
    expect(fake.live('m1').map((o) => o.id)).toEqual([old.instanceId]);
    const again = await acts.prepareAndCreate(offer, { ...spec, idempotencyKey: 'wf/run2/1', besides: [old.instanceId] });
    await release({ instanceIds: [old.instanceId], exact: true });
    expect(fake.live('m1').map((o) => o.id)).toEqual([again.instanceId]);
    expect(fake.sideResources()).toEqual(['m1@fake-a']);
    expect(fresh.instanceId).not.toBe(again.instanceId);
  });

  it('gone delays start at half the poll interval and back off to twice it', () => {
    const d = goneDelays(1_000);
    expect([0, 1, 2, 3, 4, 5].map(d)).toEqual([500, 750, 1125, 1688, 2000, 2000]);
  });
});

describe('prepareAndCreate: adoption by positive evidence only', () => {
  it('a live same-named instance of this deployment made by another create is never adopted: InvalidRequest, before anything is made', async () => {
    const fake = new FakeProvider();
    const { acts } = setup(fake);
    await acts.prepareAndCreate(offer, { ...spec, idempotencyKey: 'someone-else/run/0' });
    const before = fake.calls.length;
    const err = await acts.prepareAndCreate(offer, spec).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'InvalidRequest' });
    expect(String((err as Error).message)).toContain('not adopted');
    expect(fake.calls.slice(before).map((c) => c.primitive)).toEqual(['observe']);
    expect(fake.liveCount()).toBe(1);
  });

  it('a retry of the same create adopts what the first try made', async () => {
    const fake = new FakeProvider();
    const { acts } = setup(fake);
    const first = await acts.prepareAndCreate(offer, spec);
    const again = await acts.prepareAndCreate(offer, spec);
    expect(again).toMatchObject({ instanceId: first.instanceId, adopted: true });
    expect(fake.liveCount()).toBe(1);
  });
});
