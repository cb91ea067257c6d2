/**
 * Vast.ai's interruptible market as spot: plan (bid search, the on-demand price beside), the bid
 * create, "bid too low" as Capacity for the spot offer only, and an outbid instance as a
 * preemption in observe and inventory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors';
import { offerKey } from '../../src/core/offers';
import type { Offer } from '../../src/core/provider';
import { classify } from '../../src/providers/vastai/errors';
import { toObserved } from '../../src/providers/vastai/map';
import { minBidOf, priceOf } from '../fixtures/vastai/market';
import { BODIES } from '../fixtures/vastai/server';
import { locationOf, specFor } from './conformance';
import { StatusFirstHttpError as VastHttpError } from './double';
import { planned } from './planned';
import { startVastaiDouble, type VastDouble } from './vastai/double';

const request = { vmName: 'x', gpu: { model: 'RTX4090', count: 1 }, k8s: false };
const searches = (d: VastDouble): Record<string, unknown>[] =>
  d.server.http.requests.filter((q) => q.method === 'POST' && /\/bundles\/?$/.test(q.path)).map((q) => q.body as Record<string, unknown>);
const askOf = (o: Offer): number => (o.extra as { askId: number }).askId;

describe('vastai: spot (interruptible asks)', () => {
  let d: VastDouble;
  beforeAll(async () => {
    d = await startVastaiDouble();
  });
  afterAll(async () => {
    await d.close();
  });

  it('without --spot: one on-demand search, on-demand offers only', async () => {
    const before = searches(d).length;
    const offers = await d.provider.plan(request);
    expect(
      searches(d)
        .slice(before)
        .map((q) => q.type),
    ).toEqual(['on-demand']);
    expect(offers.every((o) => o.market === undefined && o.onDemandPricePerHour === undefined)).toBe(true);
  });

  it('--spot auto: a bid search beside the on-demand one; spot offers at min_bid plus storage, on-demand beside', async () => {
    const before = searches(d).length;
    const offers = await planned(d.provider, { ...request, spot: 'auto' });
    expect(
      searches(d)
        .slice(before)
        .map((q) => q.type)
        .sort(),
    ).toEqual(['bid', 'on-demand']);
    const spot = offers.filter((o) => o.market === 'spot');
    expect(spot.length).toBeGreaterThan(0);
    expect(offers.some((o) => o.market === undefined)).toBe(true);
    const s = spot.find((o) => askOf(o) === 4202)!;
    const ask = d.server.asks.find((a) => a.id === 4202)!;
    expect(s).toMatchObject({
      market: 'spot',
      pricePerHour: priceOf({ ...ask, dph_base: minBidOf(ask) }, 50),
      onDemandPricePerHour: priceOf(ask, 50),
      priceSource: 'api',
      extra: { askId: 4202, bid: minBidOf(ask) },
    });
    expect(s.pricePerHour!).toBeLessThan(s.onDemandPricePerHour!);
    expect(offerKey(s)).toMatch(/\/spot$/);
  });

  it('--spot only keeps spot offers; the price cap bounds the bid', async () => {
    const only = await planned(d.provider, { ...request, spot: 'only' });
    expect(only.length).toBeGreaterThan(0);
    expect(only.every((o) => o.market === 'spot')).toBe(true);
    const capped = await planned(d.provider, { ...request, spot: 'only', maxPricePerHour: 0.25 });
    expect(capped.every((o) => o.pricePerHour! <= 0.25 && (o.extra as { bid: number }).bid <= 0.25)).toBe(true);
  });

  it('create bids the listed minimum; an outbid instance is Stopped with a preemption in observe and inventory', async () => {
    const offer = (await planned(d.provider, { ...request, spot: 'only', regions: ['US'] }))[0]!;
    const spec = specFor('va-spot');
    const id = await d.provider.create(offer, await d.provider.prepare(offer, spec), spec);
    const ask = d.server.asks.find((a) => a.id === askOf(offer))!;
    expect(d.server.instances.get(Number(id))!.body).toMatchObject({ price: minBidOf(ask), cancel_unavail: true });
    const at = locationOf(offer);
    let obs = await d.provider.observe(at, 'va-spot');
    for (let i = 0; i < 3 && obs[0]?.status !== 'Running'; i++) obs = await d.provider.observe(at, 'va-spot');
    expect(obs[0]).toMatchObject({ id, status: 'Running' });
    expect(obs[0]!.preemption).toBeUndefined();
    d.server.outbid(Number(id));
    const t0 = Date.now();
    const [paused] = await d.provider.observe(at, 'va-spot');
    expect(paused).toMatchObject({ id, status: 'Stopped', preemption: { detail: expect.stringMatching(/^outbid/) as unknown } });
    expect(paused!.preemption!.deadline).toBeUndefined();
    expect(Date.parse(paused!.preemption!.noticeAt)).toBeGreaterThanOrEqual(t0 - 1000);
    const owned = (await d.provider.inventory(at)).find((o) => o.id === id);
    expect(owned?.preemption?.detail).toMatch(/^outbid/);
    await d.provider.delete(at, 'va-spot', [id]);
    expect(d.server.instances.has(Number(id))).toBe(false);
  });

  it('a bid below the machine minimum: 410 with cancel_unavail, Capacity for this spot offer only', async () => {
    const offer = (await planned(d.provider, { ...request, spot: 'only' }))[0]!;
    const low: Offer = { ...offer, extra: { ...(offer.extra as object), bid: 0.01 } };
    const spec = specFor('va-low');
    const live0 = await d.countLive();
    const err = await d.provider.create(low, await d.provider.prepare(low, spec), spec).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'Capacity', block: 'offer' });
    expect(await d.countLive()).toBe(live0);
    await expect(d.provider.create({ ...offer, extra: { askId: askOf(offer) } }, {}, spec)).rejects.toMatchObject({ kind: 'InvalidRequest' });
  });

  it('classify: invalid_price and the 410 are Capacity, block offer', () => {
    expect(classify(new VastHttpError(400, BODIES.invalidPrice, 'create'))).toMatchObject({ kind: 'Capacity', block: 'offer' });
    expect(classify(new VastHttpError(410, BODIES.bidCannotStart410, 'create'))).toMatchObject({ kind: 'Capacity', block: 'offer' });
  });

  it('mapping: a stopped bid instance is preempted (not Failed), whatever its intent; an on-demand one is not', () => {
    const at = { cloud: 'vastai', region: 'US' };
    const seen = '2026-12-04T01:00:00.000Z';
    expect(toObserved({ id: 1, is_bid: true, actual_status: 'stopped', intended_status: 'stopped' }, at, seen)).toMatchObject({
      status: 'Stopped',
      preemption: { noticeAt: seen, detail: 'outbid: interruptible instance stopped (intended stopped)' },
    });
    expect(toObserved({ id: 1, is_bid: true, actual_status: 'running' }, at, seen)?.preemption).toBeUndefined();
    const od = toObserved({ id: 1, is_bid: false, actual_status: 'stopped', intended_status: 'stopped' }, at, seen);
    expect([od?.status, od?.preemption]).toEqual(['Failed', undefined]);
  });
});
