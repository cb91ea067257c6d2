import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors';
import { BUILD_ID_HASH_DIGITS, WORKFLOW_VERSIONING, buildIdOf, versioningSetting } from '../../../src/core/versioning';

const SHA = 'ab'.repeat(32);

describe('worker versioning setting', () => {
  it('is off unless GPUPROV_WORKER_VERSIONING is 1', () => {
    expect(versioningSetting({}, 'gpuprov')).toEqual({ on: false });
    expect(versioningSetting({ GPUPROV_WORKER_VERSIONING: '' }, 'gpuprov')).toEqual({ on: false });
    expect(versioningSetting({ GPUPROV_WORKER_VERSIONING: '0' }, 'gpuprov')).toEqual({ on: false });
  });

  it('names the deployment after the task queue unless GPUPROV_WORKER_DEPLOYMENT_NAME says otherwise', () => {
    expect(versioningSetting({ GPUPROV_WORKER_VERSIONING: '1' }, 'team-a')).toEqual({ on: true, deploymentName: 'team-a' });
    expect(versioningSetting({ GPUPROV_WORKER_VERSIONING: '1', GPUPROV_WORKER_DEPLOYMENT_NAME: 'prod_gpu' }, 'team-a')).toEqual({
      on: true,
      deploymentName: 'prod_gpu',
    });
  });

  it.each([
    [{ GPUPROV_WORKER_VERSIONING: 'yes' }, 'GPUPROV_WORKER_VERSIONING'],
    [{ GPUPROV_WORKER_VERSIONING: '1', GPUPROV_WORKER_DEPLOYMENT_NAME: 'a.b' }, 'GPUPROV_WORKER_DEPLOYMENT_NAME'],
    [{ GPUPROV_WORKER_DEPLOYMENT_NAME: 'gpuprov' }, 'GPUPROV_WORKER_DEPLOYMENT_NAME'],
  ])('refuses %j naming %s and a fix', (env, field) => {
    const err = (() => {
      try {
        versioningSetting(env, 'gpuprov');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).field).toBe(field);
    expect((err as InputError).suggestion).toBeTruthy();
  });

  it('refuses a task queue that cannot be a deployment name, naming the variable to set', () => {
    expect(() => versioningSetting({ GPUPROV_WORKER_VERSIONING: '1' }, 'q.with.dots')).toThrow(/not a deployment name/);
  });
});

describe('build id', () => {
  it('is the package version and a prefix of the bundle hash', () => {
    expect(buildIdOf('0.1.0', SHA)).toBe(`0.1.0-${SHA.slice(0, BUILD_ID_HASH_DIGITS)}`);
  });

  it('refuses anything but a sha256 in hex', () => {
    expect(() => buildIdOf('0.1.0', 'nothex')).toThrow(/sha256/);
  });
});

describe('versioning behaviour by workflow type', () => {
  it('pins the short and billing workflows and lets the long-lived entities move', () => {
    const pinned = Object.entries(WORKFLOW_VERSIONING)
      .filter(([, b]) => b === 'PINNED')
      .map(([n]) => n);
    expect(pinned.sort()).toEqual(['blockOfferingsWorkflow', 'launchWorkflow', 'offersWorkflow', 'teardownWorkflow', 'vmWorkflow']);
  });
});
