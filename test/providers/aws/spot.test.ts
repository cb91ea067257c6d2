/**
 * The AWS spot market against moto: spot offers per AZ priced from DescribeSpotPriceHistory with
 * on-demand beside them (only when the request asks for spot), the spot create's market options,
 * spot errors scoped to the spot offer, and a reclaim in observe and inventory. Answers moto
 * cannot give (real spot prices, spot request statuses) are test/fixtures/aws/spot.ts.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerKey } from '../../../src/core/offers';
import type { Offer } from '../../../src/core/provider';
import { locationOf, specFor } from '../conformance';
import { motoMissing } from '../../harness/moto';
import { spotPriceHistoryXml, spotRequest, spotRequestsXml, withSpotRequestIds } from '../../fixtures/aws/spot';
import { REGION, startAwsDouble, type AwsDouble } from './double';
import { failure } from './failure';
import { planned } from '../planned';

const T4 = { model: 'T4', count: 1 };

describe.skipIf(motoMissing())('aws spot on moto', () => {
  let d: AwsDouble;

  beforeAll(async () => {
    d = await startAwsDouble();
  });
  afterAll(async () => {
    await d?.close();
  });

  const sent = (command: string) => d.sent.filter((s) => s.command === command);

  describe('plan', () => {
    it('without --spot: exactly the on-demand offers, and no spot price call', async () => {
      const before = sent('DescribeSpotPriceHistory').length;
      const offers = await d.provider.plan({ vmName: 'x', gpu: T4, k8s: false });
      expect(offers.every((o) => o.market === undefined && o.spot === false && o.zone === undefined)).toBe(true);
      expect(sent('DescribeSpotPriceHistory')).toHaveLength(before);
    });

    it('--spot only: one spot offer per AZ, the price in force now, the on-demand price beside it', async () => {
      d.answer('DescribeSpotPriceHistory', spotPriceHistoryXml());
      const t0 = Date.now();
      const offers = await planned(d.provider, { vmName: 'x', gpu: T4, k8s: false, spot: 'only' });
      expect(offers.map((o) => `${o.instanceType}@${o.zone}:${o.pricePerHour}`)).toEqual([
        'g4dn.xlarge@us-east-1a:0.2198', // the later of us-east-1a's two entries
        'g4dn.xlarge@us-east-1c:0.2265',
        'g4dn.xlarge@us-east-1b:0.2401',
        'g4dn.2xlarge@us-east-1a:0.3387',
      ]);
      expect(offers[0]).toMatchObject({
        cloud: 'aws',
        region: REGION,
        zone: 'us-east-1a',
        market: 'spot',
        spot: true,
        onDemandPricePerHour: 0.526,
        priceSource: 'api',
        currency: 'USD',
        gpu: { model: 'T4', count: 1 },
      });
      expect(Date.parse(offers[0]!.pricedAt!)).toBeGreaterThanOrEqual(t0 - 1000);
      expect(offerKey(offers[0]!)).toBe('aws/us-east-1/us-east-1a/g4dn.xlarge/spot');
      const call = sent('DescribeSpotPriceHistory').at(-1)!.input;
      expect(call.ProductDescriptions).toEqual(['Linux/UNIX']);
      expect(call.InstanceTypes).toContain('g4dn.xlarge');
      expect((call.StartTime as Date).getTime()).toBe((call.EndTime as Date).getTime());
    });

    it('--spot auto: spot and on-demand offers side by side (moto prices every pool)', async () => {
      const offers = await planned(d.provider, { vmName: 'x', gpu: T4, k8s: false, spot: 'auto' });
      const spot = offers.filter((o) => o.market === 'spot');
      expect(spot.length).toBeGreaterThan(1);
      expect(new Set(spot.map((o) => o.zone)).size).toBe(spot.length / new Set(spot.map((o) => o.instanceType)).size);
      expect(offers.filter((o) => o.market === undefined).map((o) => o.instanceType)).toEqual(['g4dn.xlarge', 'g4dn.2xlarge']);
    });
  });

  describe('create', () => {
    let offer: Offer;
    beforeAll(async () => {
      d.answer('DescribeSpotPriceHistory', spotPriceHistoryXml());
      offer = (await planned(d.provider, { vmName: 'x', gpu: T4, k8s: false, spot: 'only' }))[0]!;
    });

    it('asks for a one-time spot instance that terminates on interruption, no MaxPrice, in the offer AZ only', async () => {
      const spec = specFor('spot1');
      const prepared = (await d.provider.prepare(offer, spec)) as { subnetIds: string[] };
      expect(prepared.subnetIds).toHaveLength(1);
      const id = await d.provider.create(offer, prepared, spec);
      const run = sent('RunInstances').at(-1)!.input;
      expect(run.InstanceMarketOptions).toEqual({
        MarketType: 'spot',
        SpotOptions: { SpotInstanceType: 'one-time', InstanceInterruptionBehavior: 'terminate' },
      });
      const out = await d.ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
      const i = out.Reservations![0]!.Instances![0]!;
      expect(i.InstanceLifecycle).toBe('spot');
      expect(i.Placement?.AvailabilityZone).toBe('us-east-1a');
      await d.provider.delete(locationOf(offer), spec.vmName, [id]);
      await d.provider.cleanup(locationOf(offer), spec.vmName);
    });

    it('an on-demand create sends no market options', async () => {
      const od = (await planned(d.provider, { vmName: 'x', gpu: T4, k8s: false }))[0]!;
      const spec = specFor('od1');
      const id = await d.provider.create(od, await d.provider.prepare(od, spec), spec);
      expect(sent('RunInstances').at(-1)!.input.InstanceMarketOptions).toBeUndefined();
      await d.provider.delete(locationOf(od), spec.vmName, [id]);
      await d.provider.cleanup(locationOf(od), spec.vmName);
    });

    it.each([
      ['InsufficientInstanceCapacity', 'Capacity', 'offer'],
      ['UnfulfillableCapacity', 'Capacity', 'offer'],
      ['SpotMaxPriceTooLow', 'Capacity', 'offer'],
      ['Unsupported', 'Unavailable', 'offer'],
      ['MaxSpotInstanceCountExceeded', 'Quota', 'region'],
    ])('%s on a spot create: %s, blocking the %s', async (code, kind, block) => {
      const spec = specFor(`err-${code}`);
      const prepared = await d.provider.prepare(offer, spec);
      d.armCode('RunInstances', code, { sticky: true });
      const err = await failure(d.provider.create(offer, prepared, spec));
      expect({ kind: err.kind, block: err.block ?? 'offer', code: err.code }).toEqual({ kind, block, code });
      await d.provider.cleanup(locationOf(offer), spec.vmName);
    });

    it('Unsupported on an on-demand create keeps its type-in-region block', async () => {
      const od = (await planned(d.provider, { vmName: 'x', gpu: T4, k8s: false }))[0]!;
      const spec = specFor('od-unsupported');
      const prepared = await d.provider.prepare(od, spec);
      d.armCode('RunInstances', 'Unsupported', { sticky: true });
      const err = await failure(d.provider.create(od, prepared, spec));
      expect(err.block).toBe('type-in-region');
      await d.provider.cleanup(locationOf(od), spec.vmName);
    });
  });

  describe('observe and inventory', () => {
    let offer: Offer;
    let id: string;
    const SIR = 'sir-0a1b2c3d4e5f6a7b8';
    const spec = specFor('reclaimed');

    beforeAll(async () => {
      d.answer('DescribeSpotPriceHistory', spotPriceHistoryXml());
      offer = (await planned(d.provider, { vmName: 'x', gpu: T4, k8s: false, spot: 'only' }))[0]!;
      id = await d.provider.create(offer, await d.provider.prepare(offer, spec), spec);
      d.rewrite('DescribeInstances', (xml) => withSpotRequestIds(xml, (i) => (i === id ? SIR : undefined)));
    });
    afterAll(async () => {
      d.rewrite('DescribeInstances', undefined);
      await d.provider.delete(locationOf(offer), spec.vmName, [id]);
      await d.provider.cleanup(locationOf(offer), spec.vmName);
    });

    it('marked-for-termination: preemption with the marking time and the two-minute deadline, one call for the look', async () => {
      const marked = '2026-12-04T01:02:03.000Z';
      d.answer('DescribeSpotInstanceRequests', spotRequestsXml([spotRequest(SIR, id, 'marked-for-termination', marked)]));
      const [o] = await d.provider.observe(locationOf(offer), spec.vmName);
      expect(o?.preemption).toEqual({
        noticeAt: marked,
        deadline: '2026-12-04T01:04:03.000Z',
        detail: 'marked-for-termination: Your Spot Instance is marked for termination.',
      });
      const call = sent('DescribeSpotInstanceRequests').at(-1)!.input;
      expect(call.Filters).toEqual([{ Name: 'spot-instance-request-id', Values: [SIR] }]);

      const before = sent('DescribeSpotInstanceRequests').length;
      d.answer('DescribeSpotInstanceRequests', spotRequestsXml([spotRequest(SIR, id, 'marked-for-termination', marked)]));
      const owned = await d.provider.inventory(locationOf(offer));
      expect(owned.find((x) => x.id === id)?.preemption?.deadline).toBe('2026-12-04T01:04:03.000Z');
      expect(sent('DescribeSpotInstanceRequests')).toHaveLength(before + 1);
    });

    it('instance-terminated-no-capacity while shutting down: preemption without a deadline', async () => {
      const at = '2026-12-04T01:04:05.000Z';
      d.answer('DescribeSpotInstanceRequests', spotRequestsXml([spotRequest(SIR, id, 'instance-terminated-no-capacity', at)]));
      d.rewrite('DescribeInstances', (xml) =>
        withSpotRequestIds(xml, (i) => (i === id ? SIR : undefined), {
          code: 'Server.SpotInstanceTermination',
          message: 'Server.SpotInstanceTermination: Spot instance termination',
        }).replace(
          '<instanceState><code>16</code><name>running</name></instanceState>',
          '<instanceState><code>32</code><name>shutting-down</name></instanceState>',
        ),
      );
      const [o] = await d.provider.observe(locationOf(offer), spec.vmName);
      expect(o).toMatchObject({ status: 'Terminating', preemption: { noticeAt: at, detail: expect.stringMatching(/^instance-terminated-no-capacity/) } });
      expect(o?.preemption?.deadline).toBeUndefined();
      d.rewrite('DescribeInstances', (xml) => withSpotRequestIds(xml, (i) => (i === id ? SIR : undefined)));
    });

    it('fulfilled: no preemption; without ec2:DescribeSpotInstanceRequests the instance is still observed', async () => {
      d.answer('DescribeSpotInstanceRequests', spotRequestsXml([spotRequest(SIR, id, 'fulfilled', '2026-12-04T00:55:20.000Z')]));
      expect((await d.provider.observe(locationOf(offer), spec.vmName))[0]?.preemption).toBeUndefined();
      d.armCode('DescribeSpotInstanceRequests', 'UnauthorizedOperation');
      const seen = await d.provider.observe(locationOf(offer), spec.vmName);
      expect(seen.map((o) => o.id)).toEqual([id]);
      expect(seen[0]?.preemption).toBeUndefined();
    });

    it('an on-demand look makes no spot request call', async () => {
      const od = (await planned(d.provider, { vmName: 'x', gpu: T4, k8s: false }))[0]!;
      const s = specFor('od-look');
      const odId = await d.provider.create(od, await d.provider.prepare(od, s), s);
      const before = sent('DescribeSpotInstanceRequests').length;
      const seen = await d.provider.observe(locationOf(od), s.vmName);
      expect(seen.map((o) => [o.id, o.preemption])).toEqual([[odId, undefined]]);
      expect(sent('DescribeSpotInstanceRequests')).toHaveLength(before);
      await d.provider.delete(locationOf(od), s.vmName, [odId]);
      await d.provider.cleanup(locationOf(od), s.vmName);
    });
  });
});
