/** fromEnv and explicit construction: which credentials count, and the errors when none do. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/core/errors';
import { AwsProvider, fromEnv } from '../../../src/providers/aws';

const home = mkdtempSync(join(tmpdir(), 'gpuprov-aws-env-'));
const withFile = mkdtempSync(join(tmpdir(), 'gpuprov-aws-env-'));
mkdirSync(join(withFile, '.aws'));
writeFileSync(join(withFile, '.aws', 'credentials'), '[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = secret\n');

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(withFile, { recursive: true, force: true });
});

describe('aws fromEnv', () => {
  it('is undefined without keys, profile or credentials file', () => {
    expect(fromEnv({ HOME: home })).toBeUndefined();
    expect(fromEnv({ HOME: home, AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE' })).toBeUndefined(); // half a key pair
  });

  it('returns the provider for keys, a profile, or ~/.aws/credentials', () => {
    expect(fromEnv({ HOME: home, AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'x' })?.name).toBe('aws');
    expect(fromEnv({ HOME: home, AWS_PROFILE: 'gpu' })?.name).toBe('aws');
    expect(fromEnv({ HOME: withFile })?.name).toBe('aws');
    expect(fromEnv({ HOME: home, AWS_SHARED_CREDENTIALS_FILE: join(withFile, '.aws', 'credentials') })?.name).toBe('aws');
  });

  it('explicit construction without credentials throws Credentials naming the variables', () => {
    const err = (() => {
      try {
        new AwsProvider({ env: { HOME: home } });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe('Credentials');
    expect((err as ProviderError).message).toContain('AWS_ACCESS_KEY_ID');
    expect(() => new AwsProvider({ env: { HOME: home, AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE' } })).toThrow(/set AWS_SECRET_ACCESS_KEY/);
  });

  it('capabilities: cloud-init boot script, open ports, k3s, fixed ubuntu user', () => {
    const c = new AwsProvider({ env: { HOME: home, AWS_PROFILE: 'gpu' } }).capabilities();
    expect(c).toMatchObject({ bootScript: true, openPorts: true, k8s: true, sshUser: { kind: 'fixed', user: 'ubuntu' } });
  });
});
