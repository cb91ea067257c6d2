import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors';
import { CLOUD_TABLE, type CloudRateLimit } from '../../../src/core/clouds';
import { cloudTaskQueue, mainTaskQueue, rateEnvName, rateLimitFor } from '../../../src/core/rate-limits';

describe('per-cloud rate limits', () => {
  it('names the cloud queue beside the main one', () => {
    expect(cloudTaskQueue('gpuprov', 'aws')).toBe('gpuprov-cloud-aws');
  });

  it('finds the main queue back from a cloud queue; a main queue stays as it is', () => {
    expect(mainTaskQueue(cloudTaskQueue('team-a', 'gcp'), 'gcp')).toBe('team-a');
    expect(mainTaskQueue('gpuprov', 'gcp')).toBe('gpuprov');
    expect(mainTaskQueue('gpuprov-cloud-aws', 'gcp')).toBe('gpuprov-cloud-aws');
  });

  it('takes the table default without an override, and no limit for clouds without a vendor API', () => {
    expect(rateLimitFor('aws', {})).toBe((CLOUD_TABLE.aws.rateLimit as CloudRateLimit).perSecond);
    expect(rateLimitFor('digitalocean', {})).toBe(4);
    expect(rateLimitFor('local', {})).toBeUndefined();
    expect(rateLimitFor('fake', {})).toBeUndefined();
  });

  it('GPUPROV_RATE_<CLOUD> overrides: a positive number, or 0/none for no limit', () => {
    expect(rateEnvName('aws')).toBe('GPUPROV_RATE_AWS');
    expect(rateEnvName('p4-bench')).toBe('GPUPROV_RATE_P4_BENCH');
    expect(rateLimitFor('aws', { GPUPROV_RATE_AWS: '2.5' })).toBe(2.5);
    expect(rateLimitFor('aws', { GPUPROV_RATE_AWS: ' 7 ' })).toBe(7);
    expect(rateLimitFor('local', { GPUPROV_RATE_LOCAL: '3' })).toBe(3);
    expect(rateLimitFor('aws', { GPUPROV_RATE_AWS: '0' })).toBeUndefined();
    expect(rateLimitFor('aws', { GPUPROV_RATE_AWS: 'none' })).toBeUndefined();
    expect(rateLimitFor('aws', { GPUPROV_RATE_AWS: '' })).toBe((CLOUD_TABLE.aws.rateLimit as CloudRateLimit).perSecond);
    expect(rateLimitFor('gcp', { GPUPROV_RATE_AWS: '1' })).toBe((CLOUD_TABLE.gcp.rateLimit as CloudRateLimit).perSecond);
  });

  it('a bad override is bad input naming the variable and the fix', () => {
    for (const bad of ['fast', '-1', 'NaN', 'Infinity', '1/s']) {
      let err: unknown;
      try {
        rateLimitFor('aws', { GPUPROV_RATE_AWS: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).field).toBe('GPUPROV_RATE_AWS');
      expect((err as InputError).suggestion).toMatch(/GPUPROV_RATE_AWS=\d/);
    }
  });

  it('every default is a positive rate with a source', () => {
    for (const [cloud, { rateLimit: r }] of Object.entries(CLOUD_TABLE)) {
      if (r === false) continue;
      expect(r.perSecond, cloud).toBeGreaterThan(0);
      expect(r.source, cloud).not.toBe('');
    }
  });
});
