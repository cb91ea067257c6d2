import { describe, expect, it } from 'vitest';
import { gpuModelMatches, normalizeGpuName, parseGpuName } from '../../../src/core/gpu-names';
import { dropReason, explainNoMatch, formatGpuRequest, matchOffers, type DropReason, type MatchRequest } from '../../../src/core/offer-match';
import type { Offer } from '../../../src/core/provider';

const offer = (instanceType: string, gpu: Offer['gpu'] | undefined, extra: Partial<Offer> = {}): Offer => ({
  cloud: 'c',
  region: 'r1',
  instanceType,
  ...(gpu ? { gpu } : {}),
  pricePerHour: 1,
  currency: 'USD',
  ...extra,
});

const p5 = offer('p5.48xlarge', { model: 'H100', count: 8, memoryGiB: 80 }, { pricePerHour: 55.04 });
const h1 = offer('h100x1', { model: 'NVIDIA H100 80GB HBM3', count: 1, memoryGiB: 80 }, { pricePerHour: 2.99 });
const h4 = offer('h100x4', { model: 'H100 SXM', count: 4 }, { pricePerHour: 12 });
const a40 = offer('a2-highgpu-1g', { model: 'A100', count: 1, memoryGiB: 40 }, { pricePerHour: 3.67 });
const a80 = offer('a2-ultragpu-1g', { model: 'A100-80GB', count: 1, memoryGiB: 80 }, { pricePerHour: 5.07 });
const cpu = offer('t3.micro', undefined, { pricePerHour: 0.0104 });
const unpriced = offer('gpu-h100-sxm:1gpu', { model: 'H100', count: 1 }, { pricePerHour: undefined });
const west = offer('h100x1', { model: 'H100', count: 1 }, { region: 'r2', pricePerHour: 3.1 });
const spot1 = offer('h100x1', { model: 'H100', count: 1 }, { market: 'spot', pricePerHour: 1.2, onDemandPricePerHour: 2.99 });

describe('GPU names: one normaliser for every spelling', () => {
  it.each([
    ['A100-80GB', 'A100-80GB'],
    ['a100', 'A100'],
    ['NVIDIA A100 80GB PCIe', 'A100-PCIE-80GB'],
    ['H100 SXM', 'H100-SXM'],
    ['nvidia_h100', 'H100'],
    ['H100-80G-PCIe', 'H100-PCIE-80GB'],
    ['H100 (80 GB SXM5)', 'H100-SXM5-80GB'],
    ['NVIDIA GeForce RTX 4090', 'RTX4090'],
    ['Tesla V100-SXM2-16GB', 'V100-SXM2-16GB'],
    ['amd_mi300x', 'MI300X'],
  ])('%s → %s', (name, normal) => {
    expect(normalizeGpuName(name)).toBe(normal);
  });

  it('splits model, variants and memory', () => {
    expect(parseGpuName('NVIDIA A100-SXM4-40GB')).toEqual({ tokens: ['A100'], model: 'A100', variants: ['SXM4'], memoryGiB: 40 });
  });

  it.each<[string, string, number | undefined, boolean]>([
    // requested, vendor name, vendor memory, match
    ['H100', 'H100', undefined, true],
    ['h100', 'nvidia_h100', undefined, true],
    ['H100', 'NVIDIA H100 80GB HBM3', 80, true],
    ['H100', 'H100 SXM', undefined, true],
    ['H100', 'H100-80G-PCIe', undefined, true],
    ['H100', 'H100_80GB', undefined, true],
    ['H100', 'GH200', undefined, false],
    ['A100', 'NVIDIA A100 80GB PCIe', undefined, true],
    ['A100-80GB', 'NVIDIA A100 80GB PCIe', undefined, true],
    ['A100-80GB', 'A100', 40, false],
    ['A100-80GB', 'A100 PCIE', undefined, false],
    ['A100-80GB', 'A100 SXM4', 79.6, true],
    ['A100-80GB', 'A100-80GB', 80, true],
    ['A10', 'NVIDIA A100 80GB PCIe', undefined, false],
    ['A10', 'A10G', undefined, false],
    ['A10G', 'A10G', 24, true],
    ['L40', 'L40S', undefined, false],
    ['L40S', 'nvidia_l40s', undefined, true],
    ['RTX4090', 'NVIDIA GeForce RTX 4090', undefined, true],
    ['RTX4090', 'RTX4090_24GB', undefined, true],
    ['A6000', 'RTX A6000', undefined, true],
    ['RTX', 'RTX 4090', undefined, false],
    ['H100-SXM', 'H100 SXM5', undefined, true],
    ['H100-SXM', 'H100 PCIe', undefined, false],
    ['MI300X', 'amd_mi300x', undefined, true],
  ])('%s against %s (%s GiB) → %s', (wanted, vendor, mem, expected) => {
    expect(gpuModelMatches(wanted, vendor, mem)).toBe(expected);
  });
});

describe('matchOffers', () => {
  const all = [cpu, h1, unpriced, a40, west, a80, h4, p5];
  const table: [string, MatchRequest, Offer[]][] = [
    ['H100:1 is exactly one GPU: no 8-GPU type', { gpu: { model: 'H100', count: 1 } }, [h1, unpriced, west]],
    ['H100:8 is exactly eight', { gpu: { model: 'H100', count: 8 } }, [p5]],
    ['H100:4+ is at least four', { gpu: { model: 'H100', count: 4, atLeast: true } }, [h4, p5]],
    ['H100:1+ is any count', { gpu: { model: 'H100', count: 1, atLeast: true } }, [h1, unpriced, west, h4, p5]],
    ['atLeast false is exact (old histories have no field)', { gpu: { model: 'H100', count: 4, atLeast: false } }, [h4]],
    ['A100 is every A100', { gpu: { model: 'A100', count: 1 } }, [a40, a80]],
    ['A100-80GB needs 80 GB', { gpu: { model: 'A100-80GB', count: 1 } }, [a80]],
    ['no GPU asked: CPU types only', {}, [cpu]],
    ['an unknown price never passes a cap', { gpu: { model: 'H100', count: 1 }, maxPricePerHour: 100 }, [h1, west]],
    ['a cap drops what costs more', { gpu: { model: 'H100', count: 1 }, maxPricePerHour: 3 }, [h1]],
    ['a price at the cap passes', { maxPricePerHour: 0.0104 }, [cpu]],
    ['regions', { gpu: { model: 'H100', count: 1 }, regions: ['r2'] }, [west]],
    ['instance types', { gpu: { model: 'H100', count: 1 }, instanceTypes: ['h100x1'] }, [h1, west]],
    ['types and regions together', { gpu: { model: 'H100', count: 1 }, instanceTypes: ['h100x1'], regions: ['r1'] }, [h1]],
    ['empty lists do not filter', { regions: [], instanceTypes: [] }, [cpu]],
  ];
  it.each(table)('%s', (_name, req, expected) => {
    const m = matchOffers(all, req);
    expect(m.offers).toEqual(expected);
    expect(m.offers.length + m.dropped.length).toBe(all.length);
  });

  it.each<[string, Offer, MatchRequest, DropReason | undefined]>([
    ['wrong region first', west, { gpu: { model: 'A100', count: 1 }, regions: ['r1'] }, 'region'],
    ['type before GPU', h1, { gpu: { model: 'A100', count: 1 }, instanceTypes: ['x'] }, 'instance-type'],
    ['model before count', p5, { gpu: { model: 'A100', count: 1 } }, 'gpu-model'],
    ['count', p5, { gpu: { model: 'H100', count: 1 } }, 'gpu-count'],
    ['CPU type for a GPU ask', cpu, { gpu: { model: 'H100', count: 1 } }, 'gpu-model'],
    ['GPU type for a CPU ask', h1, {}, 'has-gpu'],
    [
      'GPU type, no GPU asked, under a reservation ask: the reservation names the type',
      { ...h1, market: 'reserved' },
      { reserved: { kind: 'reservation' } },
      undefined,
    ],
    ['GPU type, no GPU asked, under a queue ask: still a CPU ask', h1, { reserved: { kind: 'queue', waitMs: 60_000 } }, 'has-gpu'],
    ['unknown price under a cap', unpriced, { gpu: { model: 'H100', count: 1 }, maxPricePerHour: 9 }, 'price-unknown'],
    ['above the cap', p5, { gpu: { model: 'H100', count: 8 }, maxPricePerHour: 9 }, 'price'],
    ['a GPU entry with zero GPUs is a CPU type', offer('x', { model: 'none', count: 0 }), {}, undefined],
  ])('drop reason: %s', (_name, o, req, reason) => {
    expect(dropReason(o, req)).toBe(reason);
  });

  it.each<[string, MatchRequest, Offer[]]>([
    ['no spot asked: on-demand only', { gpu: { model: 'H100', count: 1 } }, [h1, west]],
    ['spot only', { gpu: { model: 'H100', count: 1 }, spot: 'only' }, [spot1]],
    ['spot auto: both, in input order', { gpu: { model: 'H100', count: 1 }, spot: 'auto' }, [h1, spot1, west]],
  ])('market: %s', (_name, req, expected) => {
    expect(matchOffers([h1, spot1, west], req).offers).toEqual(expected);
    expect(dropReason(spot1, { gpu: { model: 'A100', count: 1 } })).toBe('gpu-model');
  });

  it('keeps the input order', () => {
    expect(matchOffers([p5, h4, h1], { gpu: { model: 'H100', count: 1, atLeast: true } }).offers).toEqual([p5, h4, h1]);
  });
});

describe('explainNoMatch', () => {
  const why = (offers: Offer[], req: MatchRequest): string => explainNoMatch(req, matchOffers(offers, req).dropped);

  it('a count that does not exist names the counts there and the N+ form', () => {
    const text = why([cpu, a40, p5], { gpu: { model: 'H100', count: 1 } });
    expect(text).toContain('exactly 1 H100');
    expect(text).toContain('8 (p5.48xlarge)');
    expect(text).toContain('--gpu H100:8, or H100:1+');
  });
  it('an unknown model lists the GPUs there', () => {
    expect(why([cpu, a40, p5], { gpu: { model: 'B200', count: 1 } })).toBe('no B200 here; GPUs here: A100, H100');
  });
  it('a cap names the cheapest price', () => {
    expect(why([p5], { gpu: { model: 'H100', count: 8 }, maxPricePerHour: 10 })).toContain('$55.04/h (p5.48xlarge)');
  });
  it('unknown prices under a cap say so', () => {
    expect(why([unpriced], { gpu: { model: 'H100', count: 1 }, maxPricePerHour: 10 })).toContain('no known price');
  });
  it('CPU asks on a GPU-only list, types, regions', () => {
    expect(why([h1], {})).toContain('--gpu');
    expect(why([h1], { gpu: { model: 'H100', count: 1 }, instanceTypes: ['x'] })).toContain('types here: h100x1');
    expect(why([h1], { gpu: { model: 'H100', count: 1 }, regions: ['eu'] })).toBe('nothing in eu; regions here: r1');
  });
  it('a market not sold there names the markets there and the fix', () => {
    expect(why([h1], { gpu: { model: 'H100', count: 1 }, spot: 'only' })).toBe(
      'no spot offer for GPU H100:1; here only on-demand (--spot auto falls back to on-demand)',
    );
    expect(why([spot1], { gpu: { model: 'H100', count: 1 } })).toContain('(--spot or --spot auto asks for spot)');
  });
  it('formats the ask as typed', () => {
    expect(formatGpuRequest({ model: 'H100', count: 4, atLeast: true })).toBe('H100:4+');
    expect(formatGpuRequest({ model: 'H100', count: 1 })).toBe('H100:1');
  });
});
