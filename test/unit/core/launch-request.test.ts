import { describe, expect, it } from 'vitest';
import type { VmSpec } from '../../../src/core/api';
import { CONVERTED_FIELDS, LAUNCH_FIELDS, planRequestOf, REQUEST_FIELDS } from '../../../src/core/launch-request';

/** Every field of VmSpec set (`Required`: a new VmSpec field fails to compile here until it is added). */
const full: Required<VmSpec> = {
  name: 'gpu1',
  gpu: { model: 'H100', count: 8 },
  clouds: ['aws', 'gcp'],
  regions: ['us-east-1'],
  instanceTypes: ['p5.48xlarge'],
  maxPricePerHour: 99,
  ttlMs: 3_600_000,
  retryUntilUp: true,
  k8s: 'on',
  publicKeys: ['ssh-ed25519 AAAA user'],
  image: 'ami-123',
  diskGb: 500,
  budgetUsd: 100,
  parallel: 2,
  recover: true,
  spot: 'auto',
  reserved: { kind: 'reservation', id: 'cr-0123' },
};

describe('the plan request derived from the spec', () => {
  it('every spec field is classified exactly once', () => {
    const listed = [...REQUEST_FIELDS, ...CONVERTED_FIELDS, ...LAUNCH_FIELDS];
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(full).sort());
  });

  it('every request field of a spec reaches the plan whole, under its own name', () => {
    const r = planRequestOf(full);
    for (const f of REQUEST_FIELDS) expect(r[f], f).toEqual(full[f]);
    expect(r).toEqual({
      vmName: 'gpu1',
      k8s: true,
      gpu: full.gpu,
      regions: full.regions,
      instanceTypes: full.instanceTypes,
      maxPricePerHour: 99,
      image: 'ami-123',
      diskGb: 500,
      spot: 'auto',
      reserved: full.reserved,
    });
  });

  it('unset fields stay absent; k8s is on only when asked', () => {
    expect(planRequestOf({ name: 'a' })).toEqual({ vmName: 'a', k8s: false });
    expect(planRequestOf({ name: 'a', k8s: 'auto' }).k8s).toBe(false);
    expect(planRequestOf({ name: 'a', maxPricePerHour: 0 })).toEqual({ vmName: 'a', k8s: false, maxPricePerHour: 0 });
  });
});
