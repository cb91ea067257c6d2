/**
 * Nebius capacity block groups against the gRPC fixture: a reservation ask plans the project's
 * usable groups (CapacityBlockGroupService.List) as `reserved` offers of their platform's presets
 * (free = current_limit − usage, full ones listed too), and a create into one sends
 * `reservation_policy` STRICT naming that group only; a full group answers Capacity for that offer
 * with no instance made. The `.proto` subset is judged against the nebius SDK's descriptors in
 * test/contract (contract.test.ts, "nebius: our .proto files").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { offerKey } from '../../../src/core/offers';
import type { Offer, ResourceRequest } from '../../../src/core/provider';
import { GROUP_PRICE_NOTE } from '../../../src/providers/nebius/reservations';
import { PROJECTS } from '../../fixtures/nebius/server';
import { specFor } from '../conformance';
import { startNebiusDouble, type NebiusDouble } from './double';

const EU = PROJECTS['eu-north1'];
const US = PROJECTS['us-central1'];

describe('nebius capacity block groups', () => {
  let d: NebiusDouble;
  afterEach(async () => {
    await d?.close();
  });

  async function start(): Promise<NebiusDouble> {
    d = await startNebiusDouble();
    d.server.groups.push(
      {
        id: 'capacityblockgroup-e00h100',
        parentId: EU,
        region: 'eu-north1',
        platform: 'gpu-h100-sxm',
        limit: 2,
        usage: 1,
        start: '2026-12-01T00:00:00Z',
        end: '2027-03-01T00:00:00Z',
      },
      { id: 'capacityblockgroup-e00h200', parentId: EU, region: 'eu-north1', platform: 'gpu-h200-sxm', limit: 1, usage: 1 },
      { id: 'capacityblockgroup-e00gone', parentId: EU, region: 'eu-north1', platform: 'gpu-h100-sxm', limit: 4, usage: 0, state: 'STATE_INACTIVE' },
      { id: 'capacityblockgroup-u00l40s', parentId: US, region: 'us-central1', platform: 'gpu-l40s-a', limit: 3, usage: 0 },
    );
    return d;
  }
  const plan = (req: Partial<ResourceRequest>): Promise<Offer[]> => d.provider.plan({ vmName: 'rsv', k8s: false, ...req });
  const rpcs = (from: number, rpc: string): number => d.server.log.slice(from).filter((r) => r === rpc).length;

  it('plans every usable group as reserved offers of its platform, price 0 beside the on-demand price; the inactive one left out', async () => {
    await start();
    const before = d.server.log.length;
    const offers = await plan({ reserved: { kind: 'reservation' } });
    expect(rpcs(before, 'CapacityBlockGroupService.List')).toBeGreaterThan(0);
    expect(offers.map((o) => `${o.region}/${o.instanceType}@${o.reservation!.id}:${o.reservation!.free}/${o.reservation!.total}`).sort()).toEqual([
      'eu-north1/gpu-h100-sxm:1gpu-16vcpu-200gb@capacityblockgroup-e00h100:1/2',
      'eu-north1/gpu-h100-sxm:8gpu-128vcpu-1600gb@capacityblockgroup-e00h100:1/2',
      'eu-north1/gpu-h200-sxm:1gpu-16vcpu-200gb@capacityblockgroup-e00h200:0/1',
      'us-central1/gpu-l40s-a:1gpu-8vcpu-32gb@capacityblockgroup-u00l40s:3/3',
    ]);
    const h100 = offers.find((o) => o.instanceType === 'gpu-h100-sxm:1gpu-16vcpu-200gb')!;
    expect(h100).toMatchObject({
      cloud: 'nebius',
      market: 'reserved',
      pricePerHour: 0,
      onDemandPricePerHour: 2.95,
      gpu: { model: 'H100', count: 1 },
      reservation: {
        id: 'capacityblockgroup-e00h100',
        kind: 'capacity-block',
        start: '2026-12-01T00:00:00.000Z',
        end: '2027-03-01T00:00:00.000Z',
        priceNote: GROUP_PRICE_NOTE,
      },
    });
    expect(offerKey(h100)).toBe('nebius/eu-north1/-/gpu-h100-sxm:1gpu-16vcpu-200gb/reserved:capacityblockgroup-e00h100');
  });

  it('`--reservation ID` plans that group only; an unknown or inactive id, or a capacity-block ask, plans nothing; an ordinary plan lists no group', async () => {
    await start();
    expect((await plan({ reserved: { kind: 'reservation', id: 'capacityblockgroup-u00l40s' } })).map((o) => o.instanceType)).toEqual([
      'gpu-l40s-a:1gpu-8vcpu-32gb',
    ]);
    expect(await plan({ reserved: { kind: 'reservation', id: 'capacityblockgroup-e00gone' } })).toEqual([]);
    expect(await plan({ reserved: { kind: 'reservation', id: 'capacityblockgroup-e00none' } })).toEqual([]);
    expect(await plan({ reserved: { kind: 'capacity-block', offeringId: 'cb-1' } })).toEqual([]);
    const before = d.server.log.length;
    const ordinary = await plan({ gpu: { model: 'H100', count: 1 } });
    expect(ordinary.some((o) => o.market === 'reserved')).toBe(false);
    expect(rpcs(before, 'CapacityBlockGroupService.List')).toBe(0);
  });

  it('creates into the group with reservation_policy STRICT naming it; an on-demand create sends no policy', async () => {
    await start();
    const [offer] = await plan({ reserved: { kind: 'reservation', id: 'capacityblockgroup-e00h100' }, gpu: { model: 'H100', count: 1 } });
    const spec = specFor('nb-rsv');
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const made = d.server.instances().find((i) => i.metadata.id === id)!;
    expect(made.spec.reservation_policy).toEqual({ policy: 'STRICT', reservation_ids: ['capacityblockgroup-e00h100'] });
    expect(d.server.groups[0]!.usage).toBe(2);

    const plain = (await plan({ gpu: { model: 'L40S', count: 1 }, regions: ['eu-north1'] }))[0]!;
    const spec2 = specFor('nb-plain');
    const id2 = await d.provider.create(plain, await d.provider.prepare(plain, spec2), spec2);
    expect(d.server.instances().find((i) => i.metadata.id === id2)!.spec.reservation_policy).toBeNull();
  });

  it('a full group: Capacity (scope: the offer), no instance made anywhere', async () => {
    await start();
    const [offer] = await plan({ reserved: { kind: 'reservation', id: 'capacityblockgroup-e00h200' } });
    expect(offer!.reservation!.free).toBe(0);
    const spec = specFor('nb-full');
    const prepared = await d.provider.prepare(offer!, spec);
    const live = await d.countLive();
    // Capacity's default scope is the offer (src/core/errors.ts): this group's offer only.
    await expect(d.provider.create(offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Capacity', block: undefined });
    expect(await d.countLive()).toBe(live);
    await d.provider.cleanup({ cloud: 'nebius', region: offer!.region }, spec.vmName);
  });
});
