/**
 * FakeProvider: an in-memory cloud for workflow tests, scripted per call. It records every call,
 * counts live instances, and can keep its state in a JSON file so a worker in another process
 * (killed and restarted by a test) and the test itself see the same cloud.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { ProviderError, type BlockScope, type ErrorKind } from '../../src/core/errors';
import { createKeyOf } from '../../src/providers/create-key';
import type { ProbeResult, SshProber } from '../../src/ssh';
import type {
  Capabilities,
  CloudProvider,
  InstanceSpec,
  InstanceStatus,
  Json,
  Location,
  Market,
  Observed,
  Offer,
  Owned,
  Preemption,
  ResourceRequest,
  SideResource,
} from '../../src/core/provider';
import type { BlockOffering, BlockQuery, ReservationInfo } from '../../src/core/reservation';
import { buy, emptyReserved, offeringsFor, reclaimed, refusal, reservedPlan, type FakeReservedState } from './fake-reserved';

export type FakePrimitive = 'plan' | 'prepare' | 'create' | 'observe' | 'delete' | 'cleanup' | 'probe' | 'inventory' | 'blocks' | 'buy';

/** A scripted fault. Matches calls of `primitive` (and region/type when given) `times` times (-1 = forever). */
export interface FakeRule {
  primitive: FakePrimitive;
  region?: string;
  instanceType?: string;
  error: ErrorKind;
  block?: BlockScope;
  times?: number;
  /** Let this many matching calls through before the rule fires. */
  skip?: number;
  /** create only: make the instance, then throw. */
  ambiguous?: boolean;
}

export interface FakeInstance {
  id: string;
  vmName: string;
  region: string;
  zone?: string;
  instanceType: string;
  idempotencyKey: string;
  /** The deployment that created it (InstanceSpec.owner; absent in state files from before). */
  owner?: string;
  createdAt: number;
  bootMs: number;
  status: InstanceStatus;
  port: number;
  /** Set by `preempt`: the cloud announced the reclaim (reported by observe and inventory). */
  preemption?: Preemption;
  /** Epoch ms at which a preempted instance stops (`Stopped`, not billed; listed until deleted). */
  reclaimAt?: number;
  /** The reservation (or bought block) it was launched into. */
  reservationId?: string;
  /** A queued request's instance: Pending until the queue serves it. */
  queued?: boolean;
}

export interface FakeCall {
  primitive: FakePrimitive;
  vmName?: string;
  region?: string;
  instanceType?: string;
  at: number;
  error?: ErrorKind;
  /** create: the spec's image and disk size, when given. */
  image?: string;
  /** create: the offer's market, when not on-demand. */
  market?: Market;
  /** create into a reservation, buy: the reservation's id; buy: the offering's. */
  reservationId?: string;
  offeringId?: string;
  diskGb?: number;
  /** The calling adapter's deployment (when it was built with one). */
  deployment?: string;
  /** observe, inventory, delete, cleanup: the deployments whose instances or side resources the call returned or removed. */
  owners?: string[];
  /** delete: each instance it removed, with its owner (what is gone at the cloud, and whose it was). */
  removed?: { id: string; owner?: string }[];
  /** create: the instance it made (the chaos oracle follows each instance's bill from its create to its delete). */
  id?: string;
}

interface State {
  instances: FakeInstance[];
  deleted: string[];
  rules: FakeRule[];
  calls: FakeCall[];
  nextId: number;
  bootMs: number;
  offers: Offer[];
  sideResources: string[];
  /** Per-primitive latency, ms (to cancel while a call is in flight). */
  delays: Partial<Record<FakePrimitive, number>>;
  /** Set: the cloud sells spot (see "spot market" below); absent in state files from before. */
  spot?: FakeSpot;
  /** Reservations, blocks for sale and the queue (test/harness/fake-reserved.ts); absent in state files from before. */
  reserved?: FakeReservedState;
}

/**
 * The fake's spot market: with `request.spot` set, `plan` also lists a spot twin of each offer
 * (market `spot`, `pricePerHour` = the on-demand price × `priceFactor`, `onDemandPricePerHour` =
 * the on-demand price); `noCapacity` makes every spot create answer Capacity ("no spot capacity").
 */
export interface FakeSpot {
  /** Spot price as a fraction of the on-demand price; default 0.4. */
  priceFactor?: number;
  noCapacity?: boolean;
}

export function defaultFakeOffers(cloud = 'fake'): Offer[] {
  return [
    { cloud, region: 'fake-a', instanceType: 'gpu-1', gpu: { model: 'H100', count: 1 }, pricePerHour: 2, currency: 'USD' },
    { cloud, region: 'fake-a', instanceType: 'gpu-2', gpu: { model: 'H100', count: 1 }, pricePerHour: 2.5, currency: 'USD' },
    { cloud, region: 'fake-b', instanceType: 'gpu-1', gpu: { model: 'H100', count: 1 }, pricePerHour: 3, currency: 'USD' },
    { cloud, region: 'fake-b', instanceType: 'gpu-2', gpu: { model: 'H100', count: 1 }, pricePerHour: 3.5, currency: 'USD' },
  ];
}

export class FakeProvider implements CloudProvider {
  readonly name: string;
  private readonly stateFile?: string;
  private mem: State;
  caps: Capabilities = {
    bootScript: false,
    openPorts: false,
    k8s: false,
    sshUser: { kind: 'fixed', user: 'fake' },
    bootTimeoutMs: 180_000,
    pollIntervalMs: 200,
    typicalBootMs: 300,
  };

  /** The deployment `inventory` lists; unset: every instance (instances record InstanceSpec.owner). */
  readonly deployment: string | undefined;

  /** Set with `listsSides`: the side resources of a region (this deployment's; built without one, every deployment's). */
  sideInventory?: (at: Location) => Promise<SideResource[]>;

  /** The clock reservation windows are judged by (a time-skipping test passes workflow time). */
  private readonly clock: () => number;

  constructor(
    o: {
      name?: string;
      stateFile?: string;
      offers?: Offer[];
      bootMs?: number;
      deployment?: string;
      listsSides?: boolean;
      spot?: FakeSpot;
      reserved?: Partial<FakeReservedState>;
      clock?: () => number;
    } = {},
  ) {
    this.name = o.name ?? 'fake';
    this.clock = o.clock ?? Date.now;
    this.deployment = o.deployment;
    if (o.listsSides) {
      this.sideInventory = async (at) =>
        this.load().sideResources.flatMap((k) => {
          const [vmName = '', region, owner] = k.split('@');
          const mine = this.deployment === undefined || owner === this.deployment;
          return region === at.region && mine ? [{ vmName, kind: 'fake-side', id: k }] : [];
        });
    }
    if (o.stateFile !== undefined) this.stateFile = o.stateFile;
    this.mem = {
      instances: [],
      deleted: [],
      rules: [],
      calls: [],
      nextId: 1,
      bootMs: o.bootMs ?? 0,
      offers: o.offers ?? defaultFakeOffers(this.name),
      sideResources: [],
      delays: {},
      ...(o.spot ? { spot: o.spot } : {}),
      ...(o.reserved ? { reserved: { ...emptyReserved(), ...o.reserved } } : {}),
    };
    if (this.stateFile) {
      try {
        this.mem = JSON.parse(readFileSync(this.stateFile, 'utf8')) as State;
      } catch {
        this.save(this.mem);
      }
    }
  }

  // ---- test controls -------------------------------------------------------
  script(...rules: FakeRule[]): void {
    this.mutate((s) => s.rules.push(...rules));
  }
  clearRules(): void {
    this.mutate((s) => (s.rules = []));
  }
  setBootMs(ms: number): void {
    this.mutate((s) => (s.bootMs = ms));
  }
  setDelay(p: FakePrimitive, ms: number): void {
    this.mutate((s) => (s.delays[p] = ms));
  }
  setOffers(offers: Offer[]): void {
    this.mutate((s) => (s.offers = offers));
  }
  /** A fresh cloud (no instances, calls or side resources) with these rules; ids keep growing. */
  resetState(o: { rules: FakeRule[]; bootMs: number; offers?: Offer[] }): void {
    this.mutate((s) => {
      Object.assign(s, { instances: [], deleted: [], calls: [], sideResources: [], delays: {}, rules: o.rules, bootMs: o.bootMs });
      if (o.offers) s.offers = o.offers;
    });
  }
  /**
   * A spot preemption of `id`: with `noticeMs` the instance reports `preemption {noticeAt,
   * deadline}` and keeps running until the deadline, then stops; without, it stops at once with
   * `preemption` set. A stopped one stays listed (not billed) until deleted.
   */
  preempt(id: string, o: { noticeMs?: number } = {}): Preemption | undefined {
    let out: Preemption | undefined;
    this.mutate((s) => {
      const i = s.instances.find((x) => x.id === id);
      if (!i) return;
      const now = Date.now();
      const notice = o.noticeMs !== undefined && o.noticeMs > 0;
      i.reclaimAt = now + (notice ? o.noticeMs! : 0);
      i.preemption = {
        noticeAt: new Date(now).toISOString(),
        ...(notice ? { deadline: new Date(i.reclaimAt).toISOString() } : {}),
        detail: 'fake spot reclaim',
      };
      out = i.preemption;
    });
    return out;
  }
  /** Instances of `vmName` still billed (not stopped by a preemption), at this moment. */
  billed(vmName?: string): FakeInstance[] {
    return this.live(vmName).filter((i) => this.statusOf(i) !== 'Stopped');
  }
  /** The instance disappears as if the cloud reclaimed it. */
  vanish(id: string): void {
    this.mutate((s) => (s.instances = s.instances.filter((i) => i.id !== id)));
  }
  get calls(): FakeCall[] {
    return this.load().calls;
  }
  callsOf(p: FakePrimitive): FakeCall[] {
    return this.calls.filter((c) => c.primitive === p && !c.error);
  }
  live(vmName?: string): FakeInstance[] {
    return this.load().instances.filter((i) => vmName === undefined || i.vmName === vmName);
  }
  liveCount(vmName?: string): number {
    return this.live(vmName).length;
  }
  sideResources(): string[] {
    return this.load().sideResources;
  }

  /** An SSH prober that answers for this cloud's Running instances (no real sshd behind them). */
  prober(): SshProber {
    return async (target): Promise<ProbeResult> => {
      this.check('probe', {});
      const inst = this.load().instances.find((i) => i.port === target.port);
      if (!inst || this.statusOf(inst) !== 'Running') throw new Error(`connect ECONNREFUSED ${target.host}:${target.port}`);
      return { fingerprint: `SHA256:fake-${inst.id}`, hostKey: `ssh-ed25519 ZmFrZS0ke2luc3QuaWR9` };
    };
  }

  /** Change the reservations, blocks for sale or queue (test/harness/fake-reserved.ts). */
  setReserved(fn: (r: FakeReservedState) => void): void {
    this.mutate((s) => fn((s.reserved ??= emptyReserved())));
  }
  reservedState(): FakeReservedState | undefined {
    return this.load().reserved;
  }

  /** Sell spot (or stop selling it: undefined) from now on; see {@link FakeSpot}. */
  setSpot(spot: FakeSpot | undefined): void {
    this.mutate((s) => {
      if (spot) s.spot = spot;
      else delete s.spot;
    });
  }

  // ---- spot market ---------------------------------------------------------
  /** The spot twins of `offers` when the request asks for spot and the cloud sells it. */
  private spotOffers(req: ResourceRequest, offers: readonly Offer[]): Offer[] {
    const spot = this.load().spot;
    if (!spot || !req.spot) return [];
    const factor = spot.priceFactor ?? 0.4;
    return offers.map((o) => ({
      ...o,
      market: 'spot' as const,
      ...(o.pricePerHour !== undefined ? { pricePerHour: Math.round(o.pricePerHour * factor * 10_000) / 10_000, onDemandPricePerHour: o.pricePerHour } : {}),
    }));
  }

  /** A spot create when the market has no capacity: recorded, then Capacity. */
  private refuseSpot(offer: Offer, vmName: string): void {
    if (offer.market !== 'spot' || !this.load().spot?.noCapacity) return;
    this.mutate((s) =>
      s.calls.push({ ...this.call('create', { vmName, region: offer.region, instanceType: offer.instanceType }), market: 'spot', error: 'Capacity' }),
    );
    throw new ProviderError('Capacity', `no spot capacity for ${offer.instanceType} in ${offer.region}`);
  }

  // ---- CloudProvider -------------------------------------------------------
  capabilities(): Capabilities {
    return this.load().spot ? { ...this.caps, markets: ['on-demand', 'spot'] } : this.caps;
  }

  async plan(req: ResourceRequest): Promise<Offer[]> {
    await this.latency('plan');
    this.check('plan', {});
    const offers = this.load().offers.filter(
      (o) =>
        (!req.regions?.length || req.regions.includes(o.region)) &&
        (!req.instanceTypes?.length || req.instanceTypes.includes(o.instanceType)) &&
        (req.maxPricePerHour === undefined || (o.pricePerHour ?? 0) <= req.maxPricePerHour),
    );
    const reserved = this.reservedOffers(req, offers);
    if (reserved?.length === 0) throw new ProviderError('InvalidRequest', `no reservation of this account fits the request${idOf(req)}`);
    if (offers.length === 0 && !reserved) throw new ProviderError('InvalidRequest', 'no fake offer matches the request');
    const listed = reserved ?? [...offers, ...this.spotOffers(req, offers)];
    // The fake's types come with and without GPUs: a CPU ask gets them GPU-less (planOffers keeps CPU types only).
    return req.gpu ? listed : listed.map(({ gpu: _gpu, ...o }) => o);
  }

  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    await this.latency('prepare');
    this.check('prepare', { region: offer.region, instanceType: offer.instanceType, vmName: spec.vmName });
    const key = this.sideKey(spec.vmName, offer.region);
    this.mutate((s) => {
      if (!s.sideResources.includes(key)) s.sideResources.push(key);
    });
    return { sideResource: key };
  }

  async create(offer: Offer, _prepared: Json, spec: InstanceSpec): Promise<string> {
    await this.latency('create');
    this.refuseSpot(offer, spec.vmName);
    this.refuseReserved(offer, spec.vmName);
    const hit = this.match('create', { region: offer.region, instanceType: offer.instanceType });
    if (hit && !hit.rule.ambiguous) this.fail(hit, 'create', { region: offer.region, instanceType: offer.instanceType, vmName: spec.vmName });
    let id = '';
    this.mutate((s) => {
      id = `fake-${s.nextId++}`;
      s.instances.push({
        id,
        vmName: spec.vmName,
        region: offer.region,
        ...(offer.zone ? { zone: offer.zone } : {}),
        instanceType: offer.instanceType,
        idempotencyKey: spec.idempotencyKey,
        owner: spec.owner,
        createdAt: Date.now(),
        bootMs: s.bootMs,
        status: 'Pending',
        port: 20000 + s.nextId,
        ...(offer.reservation ? { reservationId: offer.reservation.id } : {}),
        ...(offer.queued ? { queued: true } : {}),
      });
      s.calls.push({
        ...this.call('create', { vmName: spec.vmName, region: offer.region, instanceType: offer.instanceType }),
        id,
        ...(spec.image !== undefined ? { image: spec.image } : {}),
        ...(spec.diskGb !== undefined ? { diskGb: spec.diskGb } : {}),
        ...(offer.market && offer.market !== 'on-demand' ? { market: offer.market } : {}),
        ...(offer.reservation ? { reservationId: offer.reservation.id } : {}),
      });
    });
    if (hit) this.fail(hit, 'create', { region: offer.region, instanceType: offer.instanceType, vmName: spec.vmName }, false);
    return id;
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    const found = this.load().instances.filter((i) => i.vmName === vmName && i.region === at.region && this.mine(i));
    this.check('observe', { region: at.region, vmName }, found);
    return found.map((i) => this.observed(i));
  }

  /** This deployment's instances in one region (`deployment` unset: every instance). */
  async inventory(at: Location): Promise<Owned[]> {
    const found = this.load().instances.filter((i) => i.region === at.region && this.mine(i));
    this.check('inventory', { region: at.region }, found);
    return found.map((i) => ({ ...this.observed(i), vmName: i.vmName }));
  }

  async delete(at: Location, vmName: string, ids: string[], exact = false): Promise<void> {
    await this.latency('delete');
    this.fault('delete', { region: at.region, vmName });
    this.mutate((s) => {
      const gone = s.instances.filter((i) => (ids.includes(i.id) || (!exact && i.vmName === vmName)) && i.region === at.region && this.mine(i));
      s.deleted.push(...gone.map((i) => i.id));
      s.instances = s.instances.filter((i) => !gone.includes(i));
      s.calls.push({
        ...this.call('delete', { region: at.region, vmName }, gone),
        removed: gone.map((i) => ({ id: i.id, ...(i.owner ? { owner: i.owner } : {}) })),
      });
    });
  }

  async cleanup(at: Location, vmName: string): Promise<void> {
    this.fault('cleanup', { region: at.region, vmName });
    this.mutate((s) => {
      const key = this.sideKey(vmName, at.region);
      const gone = s.sideResources.includes(key) ? [{ owner: this.deployment }] : [];
      s.sideResources = s.sideResources.filter((r) => r !== key);
      s.calls.push(this.call('cleanup', { region: at.region, vmName }, gone));
    });
  }

  async blockOfferings(q: BlockQuery): Promise<BlockOffering[]> {
    this.check('blocks', {});
    return offeringsFor(this.load().reserved ?? emptyReserved(), q);
  }

  async buyBlock(offering: BlockOffering, idempotencyKey: string): Promise<ReservationInfo> {
    this.fault('buy', { region: offering.region, instanceType: offering.instanceType });
    let out: ReservationInfo | undefined;
    this.mutate((s) => {
      const st = (s.reserved ??= emptyReserved());
      const listed = st.forSale.some((b) => b.offeringId === offering.offeringId);
      const had = st.bought.some((b) => b.key === idempotencyKey);
      if (!listed && !had) return;
      const like = s.offers.find((o) => o.instanceType === offering.instanceType && o.region === offering.region);
      const r = buy(st, offering, idempotencyKey, () => s.nextId++, {
        ...(like?.gpu ? { gpu: like.gpu } : {}),
        ...(like?.pricePerHour !== undefined ? { onDemandPricePerHour: like.pricePerHour } : {}),
      });
      out = r.info;
      if (r.made)
        s.calls.push({
          ...this.call('buy', { region: offering.region, instanceType: offering.instanceType }),
          reservationId: r.info.id,
          offeringId: offering.offeringId,
        });
    });
    if (!out) throw new ProviderError('Capacity', `capacity block offering ${offering.offeringId} is no longer for sale`);
    return out;
  }

  // ---- reserved capacity -----------------------------------------------------
  /** Instances launched into reservation `id` (they hold its places until deleted). */
  private inUse(id: string): number {
    return this.load().instances.filter((i) => i.reservationId === id).length;
  }

  private reservedOffers(req: ResourceRequest, ordinary: Offer[]): Offer[] | undefined {
    const st = this.load().reserved;
    if (!req.reserved) return undefined;
    if (!st) return req.reserved.kind === 'queue' ? undefined : [];
    const planned = reservedPlan(st, this.name, req, ordinary, (id) => this.inUse(id));
    return req.reserved.kind === 'queue' && ordinary.length === 0 ? undefined : planned;
  }

  /** A targeted create into a reservation that is full, missing or out of its window: recorded, then Capacity. */
  private refuseReserved(offer: Offer, vmName: string): void {
    if (offer.market !== 'reserved') return;
    const why = refusal(this.load().reserved ?? emptyReserved(), offer, this.inUse(offer.reservation?.id ?? ''), this.clock());
    if (!why) return;
    this.mutate((s) =>
      s.calls.push({
        ...this.call('create', { vmName, region: offer.region, instanceType: offer.instanceType }),
        market: 'reserved',
        ...(offer.reservation ? { reservationId: offer.reservation.id } : {}),
        error: 'Capacity',
      }),
    );
    throw new ProviderError('Capacity', why);
  }

  // ---- internals -----------------------------------------------------------
  /** Built with a deployment: only its instances (and those from before owners) are this adapter's. */
  private mine(i: FakeInstance): boolean {
    return this.deployment === undefined || i.owner === undefined || i.owner === this.deployment;
  }

  /** `vm@region`, plus `@deployment` when the adapter has one (two deployments' side resources never meet). */
  private sideKey(vmName: string, region: string): string {
    return this.deployment === undefined ? `${vmName}@${region}` : `${vmName}@${region}@${this.deployment}`;
  }

  private call(p: FakePrimitive, where: { region?: string; instanceType?: string; vmName?: string }, touched?: { owner?: string }[]): FakeCall {
    const owners = touched ? [...new Set(touched.flatMap((t) => (t.owner === undefined ? [] : [t.owner])))] : [];
    return { primitive: p, ...where, at: this.clock(), ...(this.deployment ? { deployment: this.deployment } : {}), ...(owners.length ? { owners } : {}) };
  }

  private observed(i: FakeInstance): Observed {
    const status = this.statusOf(i);
    return {
      id: i.id,
      status,
      location: { cloud: this.name, region: i.region, ...(i.zone ? { zone: i.zone } : {}) },
      instanceType: i.instanceType,
      createKey: createKeyOf(i.idempotencyKey),
      ...(status === 'Running' ? { endpoint: { host: '127.0.0.1', port: i.port, user: 'fake' } } : {}),
      ...(i.preemption ? { preemption: i.preemption } : {}),
    };
  }

  private async latency(p: FakePrimitive): Promise<void> {
    const ms = this.load().delays?.[p] ?? 0;
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
  }

  private statusOf(i: FakeInstance): InstanceStatus {
    if (i.reclaimAt !== undefined && Date.now() >= i.reclaimAt) return 'Stopped';
    if (reclaimed(this.load().reserved, i.reservationId, this.clock())) return 'Stopped';
    const q = this.load().reserved?.queue;
    if (i.queued && q?.serveAfterMs === undefined) return 'Pending';
    if (i.queued) return Date.now() - i.createdAt >= q!.serveAfterMs! ? 'Running' : 'Pending';
    return Date.now() - i.createdAt >= i.bootMs ? 'Running' : 'Pending';
  }

  private load(): State {
    if (!this.stateFile) return this.mem;
    return JSON.parse(readFileSync(this.stateFile, 'utf8')) as State;
  }

  private save(s: State): void {
    this.mem = s;
    if (!this.stateFile) return;
    writeFileSync(`${this.stateFile}.tmp`, JSON.stringify(s));
    renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }

  private mutate(fn: (s: State) => unknown): void {
    this.locked(() => {
      const s = this.load();
      fn(s);
      this.save(s);
    });
  }

  /**
   * Hazard: several processes (two deployments' workers, the chaos kit) read-modify-write one state
   * file; without this lock one's write drops the other's. A holder SIGKILLed mid-write leaves the
   * lock file behind: it is taken over after a second.
   */
  private locked(fn: () => void): void {
    if (!this.stateFile) return fn();
    const lock = `${this.stateFile}.lock`;
    for (;;) {
      try {
        closeSync(openSync(lock, 'wx'));
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        try {
          if (Date.now() - statSync(lock).mtimeMs > 1_000) rmSync(lock, { force: true });
        } catch {
          // released meanwhile
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
      }
    }
    try {
      fn();
    } finally {
      rmSync(lock, { force: true });
    }
  }

  private match(p: FakePrimitive, where: { region?: string; instanceType?: string }): { rule: FakeRule; index: number } | undefined {
    const s = this.load();
    const i = s.rules.findIndex(
      (r) =>
        r.primitive === p &&
        (r.times === undefined || r.times !== 0) &&
        (!r.region || r.region === where.region) &&
        (!r.instanceType || r.instanceType === where.instanceType),
    );
    const rule = s.rules[i];
    if (rule?.skip) {
      this.mutate((st) => (st.rules[i]!.skip = rule.skip! - 1));
      return undefined;
    }
    return rule ? { rule, index: i } : undefined;
  }

  /** Throw the scripted error for this call, if any; record the call (with the owners of what it `touched`). */
  private check(p: FakePrimitive, where: { region?: string; instanceType?: string; vmName?: string }, touched?: { owner?: string }[]): void {
    this.fault(p, where);
    this.mutate((s) => s.calls.push(this.call(p, where, touched)));
  }

  /** Throw the scripted error for this call, if any (recording the failed call). */
  private fault(p: FakePrimitive, where: { region?: string; instanceType?: string; vmName?: string }): void {
    const hit = this.match(p, where);
    if (hit) this.fail(hit, p, where);
  }

  private fail(
    hit: { rule: FakeRule; index: number },
    p: FakePrimitive,
    where: { region?: string; instanceType?: string; vmName?: string },
    record = true,
  ): never {
    const { rule } = hit;
    this.mutate((s) => {
      const r = s.rules[hit.index];
      if (r && r.times !== undefined && r.times > 0) r.times -= 1;
      if (r && r.times === undefined) r.times = 0;
      if (record) s.calls.push({ ...this.call(p, where), error: rule.error });
    });
    throw new ProviderError(rule.error, `fake ${p} ${rule.error}${where.region ? ` in ${where.region}` : ''}`, rule.block ? { block: rule.block } : {});
  }
}

/** ` <id>` of a request's reservation ask, for messages. */
function idOf(req: ResourceRequest): string {
  return req.reserved?.kind === 'reservation' && req.reserved.id ? ` (no reservation ${req.reserved.id})` : '';
}
