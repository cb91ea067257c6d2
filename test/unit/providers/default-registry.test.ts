import { describe, expect, it } from 'vitest';
import { defaultClouds } from '../../../src/providers/default-registry';
import { ProviderRegistry } from '../../../src/providers/registry';
import type { CloudProvider } from '../../../src/core/provider';

const p = (name: string): CloudProvider => ({ name }) as CloudProvider;

describe('default clouds when the user names none', () => {
  it('every credentialed cloud, never local or docker beside them', () => {
    expect(defaultClouds(new ProviderRegistry([p('aws'), p('lambda'), p('docker'), p('local')]))).toEqual(['aws', 'lambda']);
  });
  it('without credentials: local, even with a Docker daemon around', () => {
    expect(defaultClouds(new ProviderRegistry([p('docker'), p('local')]))).toEqual(['local']);
  });
  it('docker alone stays available when it is all there is', () => {
    expect(defaultClouds(new ProviderRegistry([p('docker')]))).toEqual(['docker']);
  });
});
