/**
 * The provider conformance battery: every adapter runs it against its own test double
 * (fixture HTTP server, moto, a fake socket, or real sshd processes for `local`).
 *
 * Usage, inside a test file:
 *   runConformance({ name: 'lambda', make: async () => ({ provider, countLive, arm, ... }) });
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, type ErrorKind } from '../../src/core/errors';
import { createOrAdopt } from '../../src/activities/create-or-adopt';
import { locationOf } from '../../src/core/offers';
import { planned } from './planned';
import type { CloudProvider, InstanceSpec, Location, Observed, Offer, ResourceRequest } from '../../src/core/provider';

export type Primitive = 'plan' | 'prepare' | 'create' | 'observe' | 'delete' | 'cleanup';

/** What a test double offers the battery. */
export interface ConformanceEnv {
  provider: CloudProvider;
  /** A request that plans at least one offer. */
  request: ResourceRequest;
  /** Instances alive at the double (not terminated), across all VM names. */
  countLive(): Promise<number>;
  /** Make the next call of `primitive` fail as the vendor does for `kind`. */
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  /** Error kinds the double can produce (at least Capacity, Quota or Unavailable, and Credentials). */
  kinds: { kind: ErrorKind; primitive: Primitive }[];
  /** Move time along at the double (pending → running, terminating → gone). Optional. */
  tick?(): Promise<void>;
  /** True when `create` itself honours `spec.idempotencyKey` (AWS ClientToken, GCP requestId). */
  nativeIdempotency: boolean;
  /** Upper bound of observe polls before Running / gone (each poll calls `tick`). */
  maxPolls?: number;
  /** Delay between polls, ms (for real processes). */
  pollDelayMs?: number;
  /** The same cloud's adapter, against the same double, built for another deployment. */
  twin?(deployment: string): CloudProvider;
  /** Side resources (keys, security groups, firewalls, volumes, scripts) at the double, across deployments. */
  countSide?(): Promise<number>;
  close(): Promise<void>;
}

/** The deployment every conformance double's main adapter is built with (`specFor`'s owner). */
export const CONFORMANCE_DEPLOYMENT = 'conformance';

export interface ConformanceTarget {
  name: string;
  make(): Promise<ConformanceEnv>;
}

let seq = 0;
export function specFor(vmName: string, extra: Partial<InstanceSpec> = {}): InstanceSpec {
  seq += 1;
  return {
    vmName,
    owner: CONFORMANCE_DEPLOYMENT,
    publicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIg1uTmC5f4c2rJ2nU9b7cRzmXG0q8QfBq0Yv7aQw6Yb conformance@test'],
    idempotencyKey: `conformance-${vmName}-${seq}`,
    openPorts: [22],
    ...extra,
  };
}

export { locationOf };

async function pollObserve(env: ConformanceEnv, at: Location, vm: string, done: (obs: Observed[]) => boolean): Promise<Observed[]> {
  const max = env.maxPolls ?? 20;
  let last: Observed[] = [];
  for (let i = 0; i < max; i++) {
    last = await env.provider.observe(at, vm);
    if (done(last)) return last;
    if (env.tick) await env.tick();
    if (env.pollDelayMs) await new Promise((r) => setTimeout(r, env.pollDelayMs));
  }
  return last;
}

export function runConformance(target: ConformanceTarget): void {
  describe(`conformance: ${target.name}`, () => {
    let env: ConformanceEnv;
    let offer: Offer;
    const vm = (s: string): string => `cf-${target.name.replace(/[^a-z0-9]/g, '')}-${s}`;

    beforeAll(async () => {
      env = await target.make();
    });
    afterAll(async () => {
      await env?.close();
    });

    it('plan returns ordered offers of this cloud and creates nothing', async () => {
      const before = await env.countLive();
      const offers = await planned(env.provider, env.request);
      expect(offers.length).toBeGreaterThan(0);
      for (const o of offers) {
        expect(o.cloud).toBe(env.provider.name);
        expect(o.region).toBeTruthy();
        expect(o.instanceType).toBeTruthy();
        if (o.pricePerHour !== undefined) {
          expect(o.pricePerHour).toBeGreaterThanOrEqual(0);
          // Every price says where it came from and when (an ISO time for `api`, the table's date for `catalog`).
          expect(['api', 'catalog']).toContain(o.priceSource);
          expect(Number.isNaN(Date.parse(o.pricedAt ?? ''))).toBe(false);
        }
      }
      expect(await env.countLive()).toBe(before);
      offer = offers[0]!;
    });

    it('capabilities are coherent', () => {
      const c = env.provider.capabilities();
      expect(c.pollIntervalMs).toBeGreaterThan(0);
      expect(c.bootTimeoutMs).toBeGreaterThan(c.pollIntervalMs);
      if (c.k8s) expect(c.bootScript || c.sshUser.kind === 'fixed').toBe(true);
    });

    it('prepare is idempotent', async () => {
      const spec = specFor(vm('prep'));
      const a = await env.provider.prepare(offer, spec);
      const b = await env.provider.prepare(offer, spec);
      expect(b).toEqual(a);
      await env.provider.cleanup(locationOf(offer), spec.vmName);
    });

    it('create labels the identity; observe finds exactly it, Running with an SSH endpoint; delete removes it', async () => {
      const spec = specFor(vm('life'));
      const at = locationOf(offer);
      const live0 = await env.countLive();
      const prepared = await env.provider.prepare(offer, spec);
      const id = await env.provider.create(offer, prepared, spec);
      expect(typeof id).toBe('string');
      expect(await env.countLive()).toBe(live0 + 1);

      const other = await env.provider.observe(at, vm('someone-else'));
      expect(other).toEqual([]);

      const running = await pollObserve(env, at, spec.vmName, (o) => o.some((x) => x.status === 'Running' && x.endpoint));
      expect(running.map((o) => o.id)).toEqual([id]);
      const inst = running[0]!;
      expect(inst.status).toBe('Running');
      expect(inst.endpoint?.host).toBeTruthy();
      expect(inst.endpoint?.port).toBeGreaterThan(0);
      expect(inst.location.cloud).toBe(env.provider.name);
      expect(inst.location.region).toBe(offer.region);

      await env.provider.delete(at, spec.vmName, [id]);
      await env.provider.delete(at, spec.vmName, [id]); // idempotent
      const gone = await pollObserve(env, at, spec.vmName, (o) => o.length === 0);
      expect(gone).toEqual([]);
      await env.provider.cleanup(at, spec.vmName);
      await env.provider.cleanup(at, spec.vmName); // idempotent
      expect(await env.countLive()).toBe(live0);
    });

    it('delete finds instances by identity even without ids (ambiguous create)', async () => {
      const spec = specFor(vm('byid'));
      const at = locationOf(offer);
      const live0 = await env.countLive();
      const prepared = await env.provider.prepare(offer, spec);
      await env.provider.create(offer, prepared, spec);
      await env.provider.delete(at, spec.vmName, []);
      const gone = await pollObserve(env, at, spec.vmName, (o) => o.length === 0);
      expect(gone).toEqual([]);
      await env.provider.cleanup(at, spec.vmName);
      expect(await env.countLive()).toBe(live0);
    });

    it('delete of unknown ids and cleanup of unknown VMs succeed', async () => {
      const at = locationOf(offer);
      await env.provider.delete(at, vm('never'), ['does-not-exist-12345']);
      await env.provider.cleanup(at, vm('never'));
    });

    it('a create retried with the same idempotency key makes one instance', async () => {
      const spec = specFor(vm('idem'));
      const at = locationOf(offer);
      const live0 = await env.countLive();
      const prepared = await env.provider.prepare(offer, spec);
      const a = await createOrAdopt(env.provider, offer, prepared, spec);
      const b = await createOrAdopt(env.provider, offer, prepared, spec);
      expect(b.instanceId).toBe(a.instanceId);
      expect(b.adopted).toBe(true);
      if (env.nativeIdempotency) {
        const c = await env.provider.create(offer, prepared, spec);
        expect(c).toBe(a.instanceId);
      }
      expect(await env.countLive()).toBe(live0 + 1);
      await env.provider.delete(at, spec.vmName, [a.instanceId]);
      await pollObserve(env, at, spec.vmName, (o) => o.length === 0);
      await env.provider.cleanup(at, spec.vmName);
      expect(await env.countLive()).toBe(live0);
    });

    it('two deployments, same VM name: each sees, lists and deletes only its own', async (ctx) => {
      if (!env.twin) return ctx.skip();
      const a = env.provider;
      const b = env.twin('conformance-b');
      const name = vm('twin');
      const at = locationOf(offer);
      const side = async (): Promise<number> => (env.countSide ? env.countSide() : 0);
      const live0 = await env.countLive();
      const side0 = await side();
      const specA = specFor(name);
      const made = await createOrAdopt(a, offer, await a.prepare(offer, specA), specA);
      const sideA = await side();
      const specB = specFor(name, { owner: 'conformance-b' });
      const other = await createOrAdopt(b, offer, await b.prepare(offer, specB), specB);
      expect(other.adopted, "B adopted A's instance").toBe(false);
      expect(other.instanceId).not.toBe(made.instanceId);
      const sideAB = await side();
      expect(await env.countLive()).toBe(live0 + 2);

      const seenA = await pollObserve(env, at, name, (o) => o.length > 0);
      expect(seenA.map((o) => o.id)).toEqual([made.instanceId]);
      expect((await b.observe(at, name)).map((o) => o.id)).toEqual([other.instanceId]);
      const invA = await a.inventory(at);
      const invB = await b.inventory(at);
      expect(invA.filter((o) => o.vmName === name).map((o) => o.id)).toEqual([made.instanceId]);
      expect(invB.filter((o) => o.vmName === name).map((o) => o.id)).toEqual([other.instanceId]);
      expect(invA.map((o) => o.id)).not.toContain(other.instanceId);
      expect(invB.map((o) => o.id)).not.toContain(made.instanceId);
      for (const o of invA) expect(o.location.cloud).toBe(env.provider.name);

      // A tears its VM down, even naming B's id: B's instance and side resources stay at the double.
      await a.delete(at, name, [other.instanceId]);
      await a.delete(at, name, []);
      expect(await pollObserve(env, at, name, (o) => o.length === 0)).toEqual([]);
      await a.cleanup(at, name);
      expect(await env.countLive()).toBe(live0 + 1);
      expect(await side()).toBe(side0 + (sideAB - sideA));
      expect((await b.observe(at, name)).map((o) => o.id)).toEqual([other.instanceId]);

      await b.delete(at, name, []);
      for (let i = 0; i < (env.maxPolls ?? 20) && (await b.observe(at, name)).length > 0; i++) {
        if (env.tick) await env.tick();
        if (env.pollDelayMs) await new Promise((r) => setTimeout(r, env.pollDelayMs));
      }
      expect(await b.observe(at, name)).toEqual([]);
      await b.cleanup(at, name);
      expect(await env.countLive()).toBe(live0);
      expect(await side()).toBe(side0);
    });

    it("sideInventory (where the adapter has it): what prepare made, by VM name; never another deployment's; nothing after cleanup", async (ctx) => {
      const p = env.provider;
      if (!p.sideInventory) return ctx.skip();
      const name = vm('side');
      const at = locationOf(offer);
      // A boot script too, where the cloud runs one: some clouds' only side resource is the script.
      await p.prepare(offer, specFor(name, p.capabilities().bootScript ? { bootScript: { script: 'echo side', env: {} } } : {}));
      const mine = (await p.sideInventory(at)).filter((r) => r.vmName === name);
      expect(mine.length, 'prepare made side resources the inventory lists').toBeGreaterThan(0);
      for (const r of mine) expect(r.id && r.kind).toBeTruthy();
      if (env.twin) expect((await env.twin('conformance-b').sideInventory!(at)).filter((r) => r.vmName === name)).toEqual([]);
      await p.cleanup(at, name);
      expect((await p.sideInventory(at)).filter((r) => r.vmName === name)).toEqual([]);
    });

    it('each error kind comes back typed', async () => {
      expect(env.kinds.length).toBeGreaterThan(0);
      for (const { kind, primitive } of env.kinds) {
        await env.arm(kind, primitive);
        const spec = specFor(vm(`err-${kind.toLowerCase()}`));
        const at = locationOf(offer);
        const call = async (): Promise<unknown> => {
          switch (primitive) {
            case 'plan':
              return env.provider.plan(env.request);
            case 'prepare':
              return env.provider.prepare(offer, spec);
            case 'create':
              return env.provider.create(offer, await env.provider.prepare(offer, spec), spec);
            case 'observe':
              return env.provider.observe(at, spec.vmName);
            case 'delete':
              return env.provider.delete(at, spec.vmName, []);
            case 'cleanup':
              return env.provider.cleanup(at, spec.vmName);
          }
        };
        const err = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, `${kind} at ${primitive}`).toBeInstanceOf(ProviderError);
        expect((err as ProviderError).kind, `${kind} at ${primitive}`).toBe(kind);
        await env.provider.delete(at, spec.vmName, []).catch(() => undefined);
        await pollObserve(env, at, spec.vmName, (o) => o.length === 0);
        await env.provider.cleanup(at, spec.vmName).catch(() => undefined);
      }
    });
  });
}
