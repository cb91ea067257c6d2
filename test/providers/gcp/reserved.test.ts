/**
 * GCP specific reservations against the Compute fixture: the project's usable reservations as
 * `reserved` offers (free = count − inUseCount, the unusable ones left out), a launch targeted
 * into one by name, and a full, missing or unready reservation answering Capacity for that offer
 * alone, with no instance launched anywhere else.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Offer, ResourceRequest } from '../../../src/core/provider';
import { RESERVATION_NAME_KEY, RESERVED_PRICE_NOTE } from '../../../src/providers/gcp/reservations';
import { specFor } from '../conformance';
import { startGcpDouble, type GcpDouble } from './double';

const T4 = [{ acceleratorType: 'nvidia-tesla-t4', acceleratorCount: 1 }];
const ASK: ResourceRequest = { vmName: 'rsv', gpu: { model: 'T4', count: 1 }, k8s: false, reserved: { kind: 'reservation' } };

describe('gcp specific reservations', () => {
  let d: GcpDouble;
  afterEach(async () => {
    await d?.close();
  });

  async function start(): Promise<GcpDouble> {
    d = await startGcpDouble({ regions: ['us-central1'] });
    const add = (r: Parameters<GcpDouble['server']['addReservation']>[0]): void => d.server.addReservation(r);
    add({ name: 'r-t4', zone: 'us-central1-a', machineType: 'n1-standard-4', accelerators: T4, count: 2, inUseElsewhere: 1 });
    add({ name: 'r-l4', zone: 'us-central1-b', machineType: 'g2-standard-4', count: 1, inUseElsewhere: 1, deleteAtTime: '2027-01-01T00:00:00.000-08:00' });
    add({ name: 'r-east', zone: 'us-east1-c', machineType: 'n1-standard-4', accelerators: T4, count: 4 });
    add({ name: 'r-auto', zone: 'us-central1-a', machineType: 'n1-standard-4', accelerators: T4, count: 4, specificReservationRequired: false });
    add({ name: 'r-new', zone: 'us-central1-c', machineType: 'n1-standard-4', accelerators: T4, count: 4, status: 'CREATING' });
    add({ name: 'r-ssd', zone: 'us-central1-f', machineType: 'n1-standard-4', accelerators: T4, count: 4, localSsds: true });
    return d;
  }

  const plan = (req: Partial<ResourceRequest> = {}): Promise<Offer[]> => d.provider.plan({ ...ASK, ...req });

  it('lists every usable specific reservation (full ones too) as a reserved offer, in one aggregated call', async () => {
    await start();
    const before = d.server.http.log.length;
    const offers = await plan();
    expect(d.server.http.log.slice(before).map((r) => r.path)).toEqual([`/compute/v1/projects/${d.server.project}/aggregated/reservations`]);
    expect(offers.map((o) => `${o.zone}/${o.reservation!.id}`)).toEqual(['us-central1-a/r-t4', 'us-central1-b/r-l4', 'us-east1-c/r-east']);
    expect(offers[0]).toEqual({
      cloud: 'gcp',
      region: 'us-central1',
      zone: 'us-central1-a',
      instanceType: 'n1-standard-4',
      gpu: { model: 'T4', count: 1, memoryGiB: 16 },
      vcpus: 4,
      memoryGiB: 15,
      pricePerHour: 0,
      onDemandPricePerHour: 0.54,
      currency: 'USD',
      spot: false,
      market: 'reserved',
      reservation: { id: 'r-t4', kind: 'specific-reservation', total: 2, free: 1, priceNote: RESERVED_PRICE_NOTE },
      extra: { reservation: 'r-t4', acceleratorType: 'nvidia-tesla-t4', acceleratorCount: 1 },
    });
    expect(offers[1]).toMatchObject({
      instanceType: 'g2-standard-4',
      gpu: { model: 'L4', count: 1 },
      reservation: { id: 'r-l4', total: 1, free: 0, end: '2027-01-01T08:00:00.000Z' },
      extra: { reservation: 'r-l4' },
    });
    expect(offers[1]!.extra).not.toHaveProperty('acceleratorType');
    // The request's regions narrow the list.
    expect((await plan({ regions: ['us-east1'] })).map((o) => o.reservation!.id)).toEqual(['r-east']);
  });

  it('`--reservation ID` plans only that reservation (by name or zone path); an unknown or unusable one plans nothing', async () => {
    await start();
    expect((await plan({ reserved: { kind: 'reservation', id: 'r-east' } })).map((o) => o.zone)).toEqual(['us-east1-c']);
    expect((await plan({ reserved: { kind: 'reservation', id: 'zones/us-central1-b/reservations/r-l4' } })).map((o) => o.reservation!.id)).toEqual(['r-l4']);
    expect(await plan({ reserved: { kind: 'reservation', id: 'projects/x/zones/us-central1-a/reservations/r-l4' } })).toEqual([]);
    for (const id of ['nope', 'r-auto', 'r-new', 'r-ssd']) expect(await plan({ reserved: { kind: 'reservation', id } })).toEqual([]);
    // A capacity block is an AWS market: nothing here.
    expect(await plan({ reserved: { kind: 'capacity-block', offeringId: 'cb-1' } })).toEqual([]);
  });

  it('launches into the reservation by name (SPECIFIC_RESERVATION affinity), and the launch uses one of its machines', async () => {
    await start();
    const [offer] = await plan({ reserved: { kind: 'reservation', id: 'r-t4' } });
    const spec = specFor('in-rsv');
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const body = d.server.inserts[0] as Record<string, { [k: string]: unknown }>;
    expect(body.reservationAffinity).toEqual({ consumeReservationType: 'SPECIFIC_RESERVATION', key: RESERVATION_NAME_KEY, values: ['r-t4'] });
    expect(body.scheduling).toEqual({ onHostMaintenance: 'TERMINATE', automaticRestart: true });
    expect((body.guestAccelerators as unknown as { acceleratorType: string }[])[0]!.acceleratorType).toMatch(/\/acceleratorTypes\/nvidia-tesla-t4$/);
    d.server.tick();
    d.server.tick();
    const [seen] = await d.provider.observe({ cloud: 'gcp', region: 'us-central1', zone: 'us-central1-a' }, 'in-rsv');
    expect(seen).toMatchObject({ id, status: 'Running', endpoint: { port: 22 } });
    expect((await plan({ reserved: { kind: 'reservation', id: 'r-t4' } }))[0]!.reservation).toMatchObject({ total: 2, free: 0 });
  });

  it('a full reservation answers Capacity for that offer alone, and nothing launches untargeted', async () => {
    await start();
    const [full] = await plan({ reserved: { kind: 'reservation', id: 'r-l4' } });
    const spec = specFor('full');
    const prepared = await d.provider.prepare(full!, spec);
    await expect(d.provider.create(full!, prepared, spec)).rejects.toMatchObject({
      kind: 'Capacity',
      block: 'offer',
      code: 'CONDITION_NOT_MET',
      message: expect.stringContaining("Specified reservation 'r-l4' does not have available resources for the request."),
    });
    expect(d.server.instances.size).toBe(0);
    expect(d.server.inserts).toEqual([]);
    const posts = d.server.http.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/instances'));
    expect(posts.map((r) => (r.body as { reservationAffinity?: { values?: string[] } }).reservationAffinity?.values)).toEqual([['r-l4']]);
  });

  it('a reservation gone (deleted, expired) or not READY since the plan answers Capacity for the offer', async () => {
    await start();
    const [offer] = await plan({ reserved: { kind: 'reservation', id: 'r-east' } });
    const spec = specFor('gone');
    const prepared = await d.provider.prepare(offer!, spec);
    d.server.addReservation({ name: 'r-east', zone: 'us-east1-c', machineType: 'n1-standard-4', accelerators: T4, count: 4, status: 'UPDATING' });
    await expect(d.provider.create(offer!, prepared, spec)).rejects.toMatchObject({
      kind: 'Capacity',
      block: 'offer',
      message: expect.stringContaining('READY state'),
    });
    d.server.removeReservation('us-east1-c', 'r-east');
    await expect(d.provider.create(offer!, prepared, { ...spec, idempotencyKey: 'again' })).rejects.toMatchObject({
      kind: 'Capacity',
      block: 'offer',
      message: expect.stringContaining('Specified reservations [r-east] do not exist.'),
    });
    expect(d.server.instances.size).toBe(0);
    // An automatically consumed reservation cannot be targeted (a synchronous 400 `invalid`): Capacity for the offer too, not the launch's end.
    const auto = {
      ...offer!,
      region: 'us-central1',
      zone: 'us-central1-a',
      reservation: { ...offer!.reservation!, id: 'r-auto' },
      extra: { reservation: 'r-auto' },
    };
    await expect(d.provider.create(auto, prepared, { ...spec, idempotencyKey: 'auto' })).rejects.toMatchObject({
      kind: 'Capacity',
      block: 'offer',
      message: expect.stringContaining('can not be targeted as specificReservationRequired is not set'),
    });
  });
});
