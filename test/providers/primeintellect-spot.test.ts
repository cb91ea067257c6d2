/**
 * Prime Intellect spot: `isSpot` asks planned only with --spot (no extra call), the on-demand price
 * beside; create by the spot ask's cloudId; a stopped spot pod as a preemption in observe and inventory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerKey } from '../../src/core/offers';
import type { Offer } from '../../src/core/provider';
import { toObserved } from '../../src/providers/primeintellect/map';
import { locationOf, specFor } from './conformance';
import { planned } from './planned';
import { startPrimeIntellectDouble, type PrimeIntellectDouble } from './primeintellect/double';

const request = { vmName: 'x', gpu: { model: 'H100', count: 1 }, k8s: false };
const cloudIdOf = (o: Offer): string => (o.extra as { cloudId: string }).cloudId;

describe('primeintellect: spot (isSpot asks)', () => {
  let d: PrimeIntellectDouble;
  beforeAll(async () => {
    d = await startPrimeIntellectDouble();
  });
  afterAll(async () => {
    await d.close();
  });

  it('without --spot: no spot offer; with --spot: the spot ask from the same calls, on-demand beside', async () => {
    const calls = (): number => d.server.http.log.filter((l) => l.method === 'GET' && l.path.includes('/availability')).length;
    const c0 = calls();
    const plain = await d.provider.plan(request);
    const c1 = calls();
    expect(plain.some((o) => o.market === 'spot' || cloudIdOf(o) === 'c8')).toBe(false);
    const both = await d.provider.plan({ ...request, spot: 'auto' });
    expect(calls() - c1).toBe(c1 - c0);
    const spot = both.filter((o) => o.market === 'spot');
    expect(spot).toHaveLength(1);
    // FIN-01 sells the same shape on demand at 2.19 (c2).
    expect(spot[0]).toMatchObject({ region: 'FIN-01', pricePerHour: 0.59, onDemandPricePerHour: 2.19, priceSource: 'api', extra: { cloudId: 'c8' } });
    expect(offerKey(spot[0]!)).toMatch(/\/spot$/);
    expect((await planned(d.provider, { ...request, spot: 'only' })).map(cloudIdOf)).toEqual(['c8']);
  });

  it('create uses the spot ask; a stopped spot pod is Stopped with a preemption in observe and inventory', async () => {
    const [offer] = await planned(d.provider, { ...request, spot: 'only' });
    const spec = specFor('pi-spot');
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    expect(d.server.pods.get(id)!.body).toMatchObject({ pod: { cloudId: 'c8', maxPrice: 0.59 } });
    const at = locationOf(offer!);
    expect((await d.provider.observe(at, 'pi-spot'))[0]?.preemption).toBeUndefined();
    d.server.reclaim(id);
    const t0 = Date.now();
    const [seen] = await d.provider.observe(at, 'pi-spot');
    expect(seen).toMatchObject({ id, status: 'Stopped', preemption: { detail: 'spot pod STOPPED' } });
    expect(Date.parse(seen!.preemption!.noticeAt)).toBeGreaterThanOrEqual(t0 - 1000);
    expect(seen!.preemption!.deadline).toBeUndefined();
    expect((await d.provider.inventory(at)).find((o) => o.id === id)?.preemption?.detail).toBe('spot pod STOPPED');
    await d.provider.delete(at, 'pi-spot', [id]);
  });

  it('mapping: only a spot pod that is STOPPED is preempted', () => {
    const at = { cloud: 'primeintellect', region: 'FIN-01' };
    const seen = '2026-12-04T02:00:00.000Z';
    expect(toObserved({ id: 'p', status: 'STOPPED', isSpot: true }, at, seen)?.preemption).toEqual({ noticeAt: seen, detail: 'spot pod STOPPED' });
    expect(toObserved({ id: 'p', status: 'STOPPED', isSpot: false }, at, seen)?.preemption).toBeUndefined();
    expect(toObserved({ id: 'p', status: 'ACTIVE', isSpot: true }, at, seen)?.preemption).toBeUndefined();
  });
});
