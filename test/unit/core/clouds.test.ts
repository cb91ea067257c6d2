import { describe, expect, it } from 'vitest';
import { CLOUD_NAMES, CLOUD_TABLE, cloudsWhere, factsOf, laneKindOf, listed, tableCapabilities } from '../../../src/core/clouds';
import { laneOf } from '../../../src/core/hedge';

describe('the cloud table', () => {
  it('has one row per cloud name, in the preference order', () => {
    expect(Object.keys(CLOUD_TABLE)).toEqual([...CLOUD_NAMES]);
  });

  it('every cloud sells on-demand; every vendor API has a rate and every credentialed cloud but docker is planned by default', () => {
    for (const [cloud, f] of Object.entries(CLOUD_TABLE)) {
      expect(f.markets, cloud).toContain('on-demand');
      if (f.rateLimit) expect(f.rateLimit.perSecond, cloud).toBeGreaterThan(0);
      if (cloud !== 'docker' && cloud !== 'local') expect([f.rateLimit !== false, f.credentials !== undefined, f.byDefault], cloud).toEqual([true, true, true]);
    }
    expect(cloudsWhere((f) => !f.byDefault)).toEqual(['docker', 'local']);
  });

  it('keeps the lanes the hedge had: aws, lambda, nebius and local by region, the rest by cloud, the harness cloud by region', () => {
    expect(cloudsWhere((f) => f.lane === 'region')).toEqual(['aws', 'lambda', 'nebius', 'local']);
    expect(laneKindOf('fake')).toBe('region');
    expect(laneKindOf('no-such-cloud')).toBe('cloud');
    expect(laneOf({ cloud: 'aws', region: 'us-east-1' })).toBe('aws/us-east-1');
    expect(laneOf({ cloud: 'gcp', region: 'us-east1' })).toBe('gcp');
    expect(factsOf('fake')).toBeUndefined();
  });

  it('k3s: the CLI refuses only container and process clouds; the adapters promise it only where it runs', () => {
    expect(cloudsWhere((f) => f.k3s === 'never')).toEqual(['runpod', 'vastai', 'docker', 'local']);
    expect(CLOUD_NAMES.filter((c) => tableCapabilities(c).k8s)).toEqual(cloudsWhere((f) => f.k3s === 'runs'));
    expect(tableCapabilities('primeintellect').k8s).toBe(false);
  });

  it('lists names for help text', () => {
    expect(listed(['a'])).toBe('a');
    expect(listed(['a', 'b', 'c'])).toBe('a, b and c');
    expect(listed(cloudsWhere((f) => f.diskGb !== false))).toBe('aws, gcp, runpod, primeintellect, vastai, verda and nebius');
  });
});
