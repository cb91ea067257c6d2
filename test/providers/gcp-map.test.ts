import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../src/providers/gcp/catalog';
import { STATUS, labelValue, requestIdFor, resourceName, toObserved, toOffers } from '../../src/providers/gcp/map';
import { matchOffers, type MatchRequest } from '../../src/core/offer-match';

describe('gcp map', () => {
  it('requestId is a deterministic, valid, non-zero UUID per idempotency key', () => {
    const a = requestIdFor('vm-gpu1/1');
    expect(a).toBe(requestIdFor('vm-gpu1/1'));
    expect(a).not.toBe(requestIdFor('vm-gpu1/2'));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.replace(/[-0]/g, '')).not.toBe('');
  });

  it('label values are lowercase [a-z0-9_-] and at most 63 chars; names are validated', () => {
    expect(labelValue('Team.Prod/EU')).toBe('team-prod-eu');
    expect(labelValue('x'.repeat(80))).toHaveLength(63);
    expect(resourceName('gpu1', 'prod')).toMatch(/^gpuprov-gpu1-[0-9a-f]{6}$/);
    expect(resourceName('gpu1', 'prod')).not.toBe(resourceName('gpu1', 'staging'));
    expect(() => resourceName('GPU_1', 'prod')).toThrow(expect.objectContaining({ kind: 'InvalidRequest' }));
    expect(() => resourceName('a'.repeat(60), 'prod')).toThrow(expect.objectContaining({ kind: 'InvalidRequest' }));
  });

  it('has a literal status for every documented Compute status; TERMINATED is Stopped', () => {
    expect(STATUS).toEqual({
      PROVISIONING: 'Pending',
      STAGING: 'Pending',
      PENDING: 'Pending',
      PENDING_STOP: 'Stopping',
      RUNNING: 'Running',
      STOPPING: 'Stopping',
      SUSPENDING: 'Stopping',
      STOPPED: 'Stopped',
      SUSPENDED: 'Stopped',
      TERMINATED: 'Stopped',
      REPAIRING: 'Pending',
      DEPROVISIONING: 'Terminating',
    });
  });

  it('an endpoint only once RUNNING with a NAT IP', () => {
    const at = { cloud: 'gcp', region: 'us-central1', zone: 'us-central1-a' };
    const nic = [{ accessConfigs: [{ natIP: '203.0.113.9' }] }];
    expect(toObserved({ id: '1', name: 'n', status: 'STAGING', networkInterfaces: nic }, at).endpoint).toBeUndefined();
    expect(toObserved({ id: '1', name: 'n', status: 'RUNNING', networkInterfaces: nic }, at).endpoint).toEqual({
      host: '203.0.113.9',
      port: 22,
      user: 'ubuntu',
    });
    expect(toObserved({ id: '1', name: 'n', status: 'RUNNING', networkInterfaces: [{ accessConfigs: [] }] }, at).endpoint).toBeUndefined();
  });

  it('the ladder lists every rung with a price; the shared matcher picks the rung', () => {
    expect(CATALOG.every((e) => e.pricePerHour > 0)).toBe(true);
    const offers = toOffers([...CATALOG], () => ['us-central1-a']);
    const pick = (req: MatchRequest): string[] => matchOffers(offers, req).offers.map((o) => o.instanceType);
    expect(pick({ gpu: { model: 'a100-80gb', count: 1 } })).toEqual(['a2-ultragpu-1g']);
    expect(pick({ gpu: { model: 'A100', count: 1 } })).toEqual(['a2-highgpu-1g', 'a2-ultragpu-1g']);
    expect(pick({ gpu: { model: 'H100', count: 1 } })).toEqual([]);
    expect(pick({})).toEqual(['e2-small']);
    expect(pick({ gpu: { model: 'T4', count: 1 }, instanceTypes: ['g2-standard-4'] })).toEqual([]);
  });
});
