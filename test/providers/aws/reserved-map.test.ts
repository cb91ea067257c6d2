/** The AWS reserved-capacity mapping, pure (src/providers/aws/reserved.ts, blocks.ts): the headers' tables row by row. */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/core/errors';
import { blockOfferingOf, blockTypesFor } from '../../../src/providers/aws/blocks';
import { CATALOG } from '../../../src/providers/aws/catalog';
import { OFFERINGS } from '../../fixtures/aws/reserved';
import {
  BLOCK_NOTE,
  ODCR_NOTE,
  reservationInfoOf,
  reservedLaunch,
  reservedOfferOf,
  reservedScoped,
  unusable,
  type CapacityReservationRow,
} from '../../../src/providers/aws/reserved';

const row = (over: Partial<CapacityReservationRow> = {}): CapacityReservationRow => ({
  id: 'cr-0123456789abcdef0',
  instanceType: 'g4dn.xlarge',
  zone: 'us-east-1b',
  platform: 'Linux/UNIX',
  tenancy: 'default',
  total: 4,
  free: 1,
  state: 'active',
  start: '2026-12-01T00:00:00.000Z',
  reservationType: 'default',
  tags: {},
  ...over,
});

describe('aws reserved: which reservations are listed', () => {
  it.each([
    [{}, undefined],
    [{ state: 'scheduled' }, undefined],
    [{ state: 'payment-pending', reservationType: 'capacity-block' }, undefined],
    [{ free: 0 }, undefined],
    [{ state: 'expired' }, 'state expired'],
    [{ state: 'cancelled' }, 'state cancelled'],
    [{ state: 'payment-failed' }, 'state payment-failed'],
    [{ state: 'assessing' }, 'state assessing'],
    [{ platform: 'Windows' }, 'platform Windows'],
    [{ tenancy: 'dedicated' }, 'tenancy dedicated'],
    [{ instanceType: 'p5e.48xlarge' }, "type p5e.48xlarge is not in gpuprov's AWS catalog"],
  ] as const)('%j → %s', (over, why) => {
    expect(unusable(row(over), CATALOG)).toBe(why);
  });
});

describe('aws reserved: the reservation an offer carries', () => {
  it('an ODCR: no start while active, its end, no earlier leaveBy, billed with the reservation', () => {
    expect(reservationInfoOf(row({ end: '2026-12-31T00:00:00.000Z' }))).toEqual({
      id: 'cr-0123456789abcdef0',
      kind: 'capacity-reservation',
      total: 4,
      free: 1,
      end: '2026-12-31T00:00:00.000Z',
      priceNote: ODCR_NOTE,
    });
    expect(reservationInfoOf(row())).not.toHaveProperty('end');
    expect(reservationInfoOf(row({ state: 'scheduled', start: '2027-01-01T00:00:00.000Z' })).start).toBe('2027-01-01T00:00:00.000Z');
  });

  it('a capacity block: its window, and leaveBy 30 minutes before its end (EC2 starts terminating then)', () => {
    const info = reservationInfoOf(
      row({ reservationType: 'capacity-block', state: 'scheduled', start: '2026-12-09T11:30:00.000Z', end: '2026-12-10T11:30:00.000Z', free: 0, total: 1 }),
    );
    expect(info).toEqual({
      id: 'cr-0123456789abcdef0',
      kind: 'capacity-block',
      total: 1,
      free: 0,
      start: '2026-12-09T11:30:00.000Z',
      end: '2026-12-10T11:30:00.000Z',
      leaveBy: '2026-12-10T11:00:00.000Z',
      priceNote: BLOCK_NOTE,
    });
  });

  it('the offer: in the reservation AZ, reserved, price 0 with the on-demand price beside it', () => {
    const entry = CATALOG.find((e) => e.instanceType === 'g4dn.xlarge')!;
    const o = reservedOfferOf('aws', 'us-east-1', row(), entry, '2026-12-07T02:00:00.000Z');
    expect(o).toMatchObject({
      cloud: 'aws',
      region: 'us-east-1',
      zone: 'us-east-1b',
      instanceType: 'g4dn.xlarge',
      market: 'reserved',
      pricePerHour: 0,
      onDemandPricePerHour: entry.pricePerHour,
      priceSource: 'api',
      pricedAt: '2026-12-07T02:00:00.000Z',
      gpu: { model: 'T4', count: 1 },
      reservation: { id: 'cr-0123456789abcdef0', kind: 'capacity-reservation' },
    });
    const live = reservedOfferOf('aws', 'us-east-1', row(), entry, 'now', { pricePerHour: 0.61, pricedAt: 'then' });
    expect(live.onDemandPricePerHour).toBe(0.61);
  });
});

describe('aws reserved: the targeted create', () => {
  const offer = (kind: 'capacity-reservation' | 'capacity-block') =>
    reservedOfferOf('aws', 'us-east-1', row({ reservationType: kind === 'capacity-block' ? 'capacity-block' : 'default' }), CATALOG[0]!, 'now');

  it('an ODCR: the reservation as target, no market options', () => {
    expect(reservedLaunch(offer('capacity-reservation'))).toEqual({
      CapacityReservationSpecification: { CapacityReservationTarget: { CapacityReservationId: 'cr-0123456789abcdef0' } },
    });
  });

  it('a block: the target and the capacity-block market', () => {
    expect(reservedLaunch(offer('capacity-block'))).toEqual({
      CapacityReservationSpecification: { CapacityReservationTarget: { CapacityReservationId: 'cr-0123456789abcdef0' } },
      InstanceMarketOptions: { MarketType: 'capacity-block' },
    });
  });

  it('a reserved offer without its reservation is refused, never launched untargeted', () => {
    const { reservation: _gone, ...bare } = offer('capacity-reservation');
    expect(() => reservedLaunch(bare)).toThrow(ProviderError);
  });

  it('Capacity and Unavailable are scoped to the offer; Quota keeps its region', () => {
    const scoped = reservedScoped(new ProviderError('Unavailable', 'm', { block: 'type-in-region', code: 'Unsupported' })) as ProviderError;
    expect([scoped.kind, scoped.block, scoped.code]).toEqual(['Unavailable', 'offer', 'Unsupported']);
    const quota = new ProviderError('Quota', 'm', { block: 'region' });
    expect(reservedScoped(quota)).toBe(quota);
  });
});

describe('aws capacity blocks: the types asked and the offerings', () => {
  it.each([
    [{ count: 1, durationHours: 24, gpuModel: 'H100' }, ['p5.48xlarge']],
    [{ count: 1, durationHours: 24, gpuModel: 'A100' }, ['p4d.24xlarge']],
    [{ count: 1, durationHours: 24 }, ['p4d.24xlarge', 'p5.48xlarge']],
    [{ count: 1, durationHours: 24, gpuModel: 'T4' }, []],
    [{ count: 1, durationHours: 24, gpuModel: 'H100', gpuCount: 16 }, []],
    [{ count: 2, durationHours: 48, instanceTypes: ['p5e.48xlarge'] }, ['p5e.48xlarge']],
  ])('%j → %j', (q, types) => {
    expect(blockTypesFor(q)).toEqual(types);
  });

  it('an offering: its window, count, upfront price and currency', () => {
    expect(blockOfferingOf('aws', 'us-east-1', { ...OFFERINGS[0]!, currency: 'USD' })).toEqual({
      offeringId: 'cb-0a1b2c3d4e5f60718',
      cloud: 'aws',
      region: 'us-east-1',
      zone: 'us-east-1a',
      instanceType: 'p5.48xlarge',
      count: 1,
      start: '2026-12-09T11:30:00.000Z',
      end: '2026-12-10T11:30:00.000Z',
      durationHours: 24,
      upfrontPrice: 757.92,
      currency: 'USD',
    });
  });
});
