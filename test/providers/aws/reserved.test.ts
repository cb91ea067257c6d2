/**
 * AWS reserved capacity against moto: the plan of `request.reserved` (by id, every usable one, a
 * bought block), the targeted create (the reservation's AZ, its target, a block's market), a full
 * reservation answering Capacity for its offer with no untargeted launch, capacity block offerings,
 * and a purchase retried with the same key buying once. moto serves the VPC, images and instances;
 * the reservation calls it does not serve are answered by test/fixtures/aws/reserved.ts.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { offerKey } from '../../../src/core/offers';
import { OFFERINGS, ReservationStore, type ReservationRow } from '../../fixtures/aws/reserved';
import { motoMissing } from '../../harness/moto';
import { locationOf, specFor } from '../conformance';
import { REGION, startAwsDouble, type AwsDouble } from './double';
import { failure } from './failure';

const ODCR: ReservationRow = {
  id: 'cr-0123456789abcdef0',
  instanceType: 'g4dn.xlarge',
  zone: 'us-east-1b',
  total: 2,
  free: 1,
  state: 'active',
  start: '2026-12-01T08:00:00.000Z',
};
const FULL: ReservationRow = { ...ODCR, id: 'cr-0fedcba9876543210', zone: 'us-east-1c', free: 0 };
const BLOCK: ReservationRow = {
  id: 'cr-0b10c000000000042',
  instanceType: 'p5.48xlarge',
  zone: 'us-east-1a',
  total: 1,
  free: 1,
  state: 'active',
  start: '2026-12-06T11:30:00.000Z',
  end: '2026-12-08T11:30:00.000Z',
  type: 'capacity-block',
};
const OTHERS: ReservationRow[] = [
  { ...ODCR, id: 'cr-0aaaaaaaaaaaaaaa1', state: 'expired' },
  { ...ODCR, id: 'cr-0aaaaaaaaaaaaaaa2', platform: 'Windows' },
  { ...ODCR, id: 'cr-0aaaaaaaaaaaaaaa3', instanceType: 'm7i.large' },
];

describe.skipIf(motoMissing())('aws reserved capacity on moto', () => {
  let d: AwsDouble;
  let store: ReservationStore;

  beforeAll(async () => {
    d = await startAwsDouble();
  });
  afterAll(async () => {
    await d?.close();
  });
  afterEach(() => d.serve(undefined));

  const fresh = (rows: ReservationRow[] = [ODCR, FULL, BLOCK, ...OTHERS]): ReservationStore => {
    store = new ReservationStore(rows);
    d.serve((command, input) => store.serve(command, input));
    return store;
  };
  const sent = (command: string) => d.sent.filter((s) => s.command === command);
  const plan = (reserved: NonNullable<Parameters<AwsDouble['provider']['plan']>[0]['reserved']>) => d.provider.plan({ vmName: 'r', k8s: false, reserved });

  describe('plan', () => {
    it('by id: only that reservation, in its AZ, reserved, price 0 beside the on-demand price', async () => {
      fresh();
      const offers = await plan({ kind: 'reservation', id: ODCR.id });
      expect(offers).toHaveLength(1);
      expect(offers[0]).toMatchObject({
        region: REGION,
        zone: 'us-east-1b',
        instanceType: 'g4dn.xlarge',
        market: 'reserved',
        pricePerHour: 0,
        onDemandPricePerHour: 0.526,
        reservation: { id: ODCR.id, kind: 'capacity-reservation', total: 2, free: 1 },
      });
      expect(offerKey(offers[0]!)).toBe(`aws/us-east-1/us-east-1b/g4dn.xlarge/reserved:${ODCR.id}`);
      expect(sent('DescribeCapacityReservations').at(-1)!.input.CapacityReservationIds).toEqual([ODCR.id]);
      // No on-demand listing, no spot prices: the ask is the reservation.
      expect(sent('DescribeSpotPriceHistory')).toHaveLength(0);
    });

    it('an unknown id: no offers (EC2 answers InvalidCapacityReservationId.NotFound)', async () => {
      fresh();
      expect(await plan({ kind: 'reservation', id: 'cr-0999999999999999f' })).toEqual([]);
      expect(await plan({ kind: 'reservation', id: 'cr-nope' })).toEqual([]);
    });

    it('every usable reservation, full ones included, by AZ; expired, Windows and non-catalog ones left out', async () => {
      fresh();
      const offers = await plan({ kind: 'reservation' });
      expect(offers.map((o) => `${o.reservation!.id}@${o.zone}:${o.reservation!.free}/${o.reservation!.total}`)).toEqual([
        `${BLOCK.id}@us-east-1a:1/1`,
        `${ODCR.id}@us-east-1b:1/2`,
        `${FULL.id}@us-east-1c:0/2`,
      ]);
      const filters = sent('DescribeCapacityReservations').at(-1)!.input.Filters as { Name: string; Values: string[] }[];
      expect(filters.find((f) => f.Name === 'state')?.Values).toEqual(['active', 'scheduled', 'payment-pending']);
      expect(filters.find((f) => f.Name === 'instance-type')?.Values).toContain('p5.48xlarge');
      expect(offers[0]!.reservation).toMatchObject({ kind: 'capacity-block', end: BLOCK.end, leaveBy: '2026-12-08T11:00:00.000Z' });
    });

    it('reserved offers are never dropped by the vCPU quota pre-check (the reservation already counts), and ask no quota', async () => {
      fresh();
      const offers = await plan({ kind: 'reservation' });
      // A quota endpoint nothing listens on: any quota call would answer "unknown".
      const withQuotas = d.makeProvider({ quotasEndpoint: 'http://127.0.0.1:9' });
      expect(await withQuotas.quotaShortfalls(offers)).toEqual([]);
    });

    it('--queue: the ordinary plan (EC2 does not queue), no reservation call', async () => {
      fresh();
      const before = sent('DescribeCapacityReservations').length;
      const offers = await d.provider.plan({ vmName: 'r', k8s: false, gpu: { model: 'T4', count: 1 }, reserved: { kind: 'queue', waitMs: 60_000 } });
      expect(offers.some((o) => o.market === 'reserved' || o.queued)).toBe(false);
      expect(sent('DescribeCapacityReservations')).toHaveLength(before);
    });
  });

  describe('create', () => {
    it('targets the reservation, in its AZ only; the instance runs there', async () => {
      fresh();
      const [offer] = await plan({ kind: 'reservation', id: ODCR.id });
      const spec = specFor('res1');
      const prepared = (await d.provider.prepare(offer!, spec)) as { subnetIds: string[] };
      expect(prepared.subnetIds).toHaveLength(1);
      const id = await d.provider.create(offer!, prepared, spec);
      const run = sent('RunInstances').at(-1)!.input;
      expect(run.CapacityReservationSpecification).toEqual({ CapacityReservationTarget: { CapacityReservationId: ODCR.id } });
      expect(run.InstanceMarketOptions).toBeUndefined();
      const out = await d.ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
      expect(out.Reservations![0]!.Instances![0]!.Placement?.AvailabilityZone).toBe('us-east-1b');
      await d.provider.delete(locationOf(offer!), spec.vmName, [id]);
      await d.provider.cleanup(locationOf(offer!), spec.vmName);
    });

    it('a capacity block: the target and MarketType capacity-block', async () => {
      fresh();
      const [offer] = await plan({ kind: 'reservation', id: BLOCK.id });
      const spec = specFor('blk1');
      const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
      const run = sent('RunInstances').at(-1)!.input;
      expect(run.CapacityReservationSpecification).toEqual({ CapacityReservationTarget: { CapacityReservationId: BLOCK.id } });
      expect(run.InstanceMarketOptions).toEqual({ MarketType: 'capacity-block' });
      await d.provider.delete(locationOf(offer!), spec.vmName, [id]);
      await d.provider.cleanup(locationOf(offer!), spec.vmName);
    });

    it.each([
      ['ReservationCapacityExceeded', 'a full reservation'],
      ['InvalidCapacityReservationId.NotFound', 'a reservation gone'],
      ['InvalidCapacityReservationState.PendingActivation', 'a block not started'],
    ])('%s (%s): Capacity for that offer only, and no untargeted launch', async (code) => {
      fresh();
      const [offer] = await plan({ kind: 'reservation', id: FULL.id });
      const spec = specFor(`full-${code}`);
      const prepared = await d.provider.prepare(offer!, spec);
      const runs = sent('RunInstances').length;
      const live = await d.countLive();
      d.armCode('RunInstances', code, { sticky: true });
      const err = await failure(d.provider.create(offer!, prepared, spec));
      expect({ kind: err.kind, block: err.block, code: err.code }).toEqual({ kind: 'Capacity', block: 'offer', code });
      const tried = sent('RunInstances').slice(runs);
      expect(tried).toHaveLength(1);
      expect(tried.every((r) => (r.input.CapacityReservationSpecification as { CapacityReservationTarget?: unknown })?.CapacityReservationTarget)).toBe(true);
      expect(await d.countLive()).toBe(live);
      await d.provider.cleanup(locationOf(offer!), spec.vmName);
    });
  });

  describe('capacity blocks', () => {
    it('offerings for an H100 ask: p5.48xlarge in the region, soonest first, with the upfront price', async () => {
      fresh([]);
      const offerings = await d.provider.blockOfferings!({ gpuModel: 'H100', count: 1, durationHours: 24, startAfter: '2026-12-07T00:00:00.000Z' });
      expect(offerings.map((o) => `${o.offeringId}@${o.zone}:${o.start}:${o.upfrontPrice}`)).toEqual([
        'cb-0f1e2d3c4b5a69788@us-east-1b:2026-12-08T11:30:00.000Z:801.12',
        'cb-0a1b2c3d4e5f60718@us-east-1a:2026-12-09T11:30:00.000Z:757.92',
      ]);
      const ask = sent('DescribeCapacityBlockOfferings').at(-1)!.input;
      expect(ask).toMatchObject({ InstanceType: 'p5.48xlarge', InstanceCount: 1, CapacityDurationHours: 24 });
      expect((ask.StartDateRange as Date).toISOString()).toBe('2026-12-07T00:00:00.000Z');
    });

    it('a buy retried with the same key buys once and returns the same block; the plan then finds it', async () => {
      const s = fresh([]);
      const [offering] = await d.provider.blockOfferings!({ gpuModel: 'H100', count: 1, durationHours: 24 });
      const first = await d.provider.buyBlock!(offering!, 'wf-1/run-1/buy');
      const again = await d.provider.buyBlock!(offering!, 'wf-1/run-1/buy');
      expect(s.purchases).toBe(1);
      expect(again).toEqual(first);
      expect(first).toMatchObject({ kind: 'capacity-block', start: offering!.start, end: offering!.end, total: 1 });
      const buy = sent('PurchaseCapacityBlock').at(-1)!.input;
      expect(buy).toMatchObject({ CapacityBlockOfferingId: offering!.offeringId, InstancePlatform: 'Linux/UNIX' });
      const offers = await plan({ kind: 'capacity-block', offeringId: offering!.offeringId });
      expect(offers.map((o) => [o.reservation!.id, o.zone, o.instanceType])).toEqual([[first.id, offering!.zone, 'p5.48xlarge']]);
      expect((await plan({ kind: 'reservation', id: first.id })).map((o) => o.reservation!.id)).toEqual([first.id]);
    });

    it('another key buys again; a payment that failed is Capacity and is never bought again', async () => {
      const s = fresh([]);
      const [a, b] = await d.provider.blockOfferings!({ gpuModel: 'H100', count: 1, durationHours: 24 });
      await d.provider.buyBlock!(a!, 'key-a');
      await d.provider.buyBlock!(b!, 'key-b');
      expect(s.purchases).toBe(2);
      s.rows[1]!.state = 'payment-failed';
      const err = await failure(d.provider.buyBlock!(b!, 'key-b'));
      expect(err.kind).toBe('Capacity');
      expect(s.purchases).toBe(2);
    });

    it("another deployment's purchase with the same key is not taken for ours", async () => {
      const s = fresh([]);
      const [offering] = await d.provider.blockOfferings!({ gpuModel: 'H100', count: 1, durationHours: 24 });
      const other = d.makeProvider({ deployment: 'someone-else' });
      await other.buyBlock(offering!, 'shared-key');
      s.offerings = [...s.offerings, { ...OFFERINGS[0]!, offeringId: 'cb-0c0c0c0c0c0c0c0c0', zone: 'us-east-1c' }];
      const ours = await d.provider.buyBlock!({ ...offering!, offeringId: 'cb-0c0c0c0c0c0c0c0c0' }, 'shared-key');
      expect(s.purchases).toBe(2);
      expect(ours.id).not.toBe(s.rows[0]!.id);
    });
  });
});
