import { describe, expect, it } from 'vitest';
import { CLOUD_TABLE, tableCapabilities, type CloudName } from '../../../src/core/clouds';
import { ADAPTERS } from '../../../src/providers/default-registry';

describe('the adapter registry against the cloud table', () => {
  it('has exactly one adapter per row, in the same order', () => {
    expect(Object.keys(ADAPTERS)).toEqual(Object.keys(CLOUD_TABLE));
  });

  it('the clouds that need no credentials build from an empty environment, named for their row, with the row in their capabilities', () => {
    for (const cloud of ['local', 'docker'] as const satisfies readonly CloudName[]) {
      const p = ADAPTERS[cloud]({ HOME: '/nonexistent', DOCKER_HOST: 'unix:///nonexistent.sock' }, {});
      expect(p?.name, cloud).toBe(cloud);
      expect(p?.capabilities(), cloud).toMatchObject(tableCapabilities(cloud));
    }
  });

  it('a credentialed cloud without credentials builds nothing', () => {
    for (const cloud of Object.keys(CLOUD_TABLE) as CloudName[]) {
      if (cloud === 'local' || cloud === 'docker' || cloud === 'aws' || cloud === 'gcp') continue;
      expect(ADAPTERS[cloud]({}, {}), cloud).toBeUndefined();
    }
  });
});
