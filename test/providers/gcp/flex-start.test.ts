/**
 * GCP flex-start (Dynamic Workload Scheduler) queued offers against the Compute fixture: a
 * queued twin before each flex-start type's on-demand offer, the FLEX_START insert with its
 * validity from the ask's wait, the instance PENDING until capacity comes (then Running) or
 * deleted by Compute when the wait ends, and the preemptible quota it counts against.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Location, Offer, ResourceRequest } from '../../../src/core/provider';
import { flexStartable, MAX_RUN_S, validForSeconds, withQueued } from '../../../src/providers/gcp/flex-start';
import { quotaShortfallsOf } from '../../../src/providers/gcp/map';
import { ownedName } from '../../../src/providers/deployment';
import { CONFORMANCE_DEPLOYMENT, specFor } from '../conformance';
import { startGcpDouble, type GcpDouble } from './double';

const L4: ResourceRequest = { vmName: 'q', gpu: { model: 'L4', count: 1 }, k8s: false, regions: ['us-central1'], reserved: { kind: 'queue', waitMs: 600_000 } };
const MAX_LOOKS = 6;

describe('gcp flex-start queued offers', () => {
  let d: GcpDouble;
  afterEach(async () => {
    await d?.close();
  });

  it('validity: the wait in whole seconds, rounded up, plus the margin, within 90 s and 2 h; only A2/A3/A4/G2 types queue', () => {
    expect([1, 90_000, 90_001, 600_000, 7080_000, 3 * 3600_000].map(validForSeconds)).toEqual([121, 210, 211, 720, 7200, 7200]);
    expect(['g2-standard-4', 'a2-highgpu-1g', 'a3-highgpu-8g', 'a4-highgpu-8g'].every(flexStartable)).toBe(true);
    expect(['n1-standard-4', 'e2-small', 'a4x-highgpu-4g'].some(flexStartable)).toBe(false);
    const od: Offer = { cloud: 'gcp', region: 'r', zone: 'r-a', instanceType: 'g2-standard-4', extra: {} };
    const spot: Offer = { ...od, market: 'spot', spot: true };
    expect(withQueued([spot, od], 1000)).toEqual([spot, { ...od, queued: true, extra: { flexValidSeconds: 121 } }, od]);
  });

  it('plans a queued twin before each flex-start offer; N1 types (attached GPUs) get none', async () => {
    d = await startGcpDouble();
    const offers = await d.provider.plan(L4);
    const l4 = offers.filter((o) => o.instanceType === 'g2-standard-4');
    expect(l4.map((o) => `${o.zone}${o.queued ? '/queued' : ''}`)).toEqual(['us-central1-a/queued', 'us-central1-a', 'us-central1-b/queued', 'us-central1-b']);
    expect(l4[0]).toMatchObject({ queued: true, pricePerHour: l4[1]!.pricePerHour, extra: { flexValidSeconds: 720 } });
    expect(l4[0]!.market).toBeUndefined();
    const t4 = await d.provider.plan({ ...L4, gpu: { model: 'T4', count: 1 } });
    expect(t4.filter((o) => o.instanceType === 'n1-standard-4' && o.queued)).toEqual([]);
    expect(await d.provider.plan({ ...L4, reserved: undefined })).toEqual(offers.filter((o) => !o.queued));
  });

  async function placed(vmName: string): Promise<{ offer: Offer; at: Location; id: string; name: string }> {
    const offer = (await d.provider.plan(L4)).find((o) => o.queued)!;
    const spec = specFor(vmName);
    const id = await d.provider.create(offer, await d.provider.prepare(offer, spec), spec);
    return { offer, at: { cloud: 'gcp', region: offer.region, zone: offer.zone! }, id, name: ownedName(vmName, CONFORMANCE_DEPLOYMENT) };
  }

  it('places one FLEX_START insert (validity, 7-day run, deleted at its end, no reservation) and sees it Pending until capacity, then Running', async () => {
    d = await startGcpDouble();
    const q = await placed('queued-up');
    expect(d.server.inserts).toHaveLength(1);
    const body = d.server.inserts[0] as Record<string, unknown>;
    expect(body.scheduling).toEqual({
      provisioningModel: 'FLEX_START',
      maxRunDuration: { seconds: String(MAX_RUN_S) },
      instanceTerminationAction: 'DELETE',
      onHostMaintenance: 'TERMINATE',
      automaticRestart: false,
    });
    expect(body.params).toMatchObject({ requestValidForDuration: { seconds: '720' } });
    expect(body.reservationAffinity).toEqual({ consumeReservationType: 'NO_RESERVATION' });
    for (let i = 0; i < 3; i++) expect(await d.provider.observe(q.at, 'queued-up')).toMatchObject([{ id: q.id, status: 'Pending', reason: 'PENDING' }]);
    d.server.grant(q.offer.zone!, q.name);
    let running = false;
    for (let i = 0; i < MAX_LOOKS && !running; i++) running = (await d.provider.observe(q.at, 'queued-up')).some((o) => o.status === 'Running' && o.endpoint);
    expect(running).toBe(true);
    expect(d.server.inserts).toHaveLength(1);
  });

  it('a queued request that times out: Compute deletes it at the end of its validity, or the release deletes it first', async () => {
    d = await startGcpDouble();
    const byCompute = await placed('never');
    expect((await d.provider.observe(byCompute.at, 'never'))[0]!.status).toBe('Pending');
    d.server.expire(byCompute.offer.zone!, byCompute.name);
    expect(await d.provider.observe(byCompute.at, 'never')).toEqual([]);

    const byUs = await placed('given-up');
    expect((await d.provider.observe(byUs.at, 'given-up'))[0]!.status).toBe('Pending');
    await d.provider.delete(byUs.at, 'given-up', [byUs.id]);
    let gone = false;
    for (let i = 0; i < MAX_LOOKS && !gone; i++) gone = (await d.provider.observe(byUs.at, 'given-up')).length === 0;
    expect(gone).toBe(true);
  });

  it('a refused queued create blocks that offer only; flex-start counts against the preemptible quota', async () => {
    d = await startGcpDouble();
    const offer = (await d.provider.plan(L4)).find((o) => o.queued)!;
    const spec = specFor('refused');
    const prepared = await d.provider.prepare(offer, spec);
    d.armZone(offer.zone!, 'exhausted');
    await expect(d.provider.create(offer, prepared, spec)).rejects.toMatchObject({
      kind: 'Capacity',
      block: 'offer',
      message: expect.stringContaining('(flex-start)'),
    });
    d.server.disarmZone(offer.zone!);
    const quotas = new Map([['us-central1', [{ metric: 'PREEMPTIBLE_NVIDIA_L4_GPUS', limit: 0, usage: 0 }]]]);
    expect(quotaShortfallsOf([offer], quotas).map((s) => s.message)).toEqual([
      'quota PREEMPTIBLE_NVIDIA_L4_GPUS in us-central1: 0 of 0 free, g2-standard-4 needs 1',
    ]);
    expect(quotaShortfallsOf([{ ...offer, queued: false }], quotas)).toEqual([]);
  });
});
