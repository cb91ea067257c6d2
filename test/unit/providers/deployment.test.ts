import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors';
import { withWorkerKey } from '../../../src/activities/attempt';
import { deletableByName, deploymentFromEnv, deploymentOf, deploymentProblem, ownedName, vmNameOfOwnedName } from '../../../src/providers/deployment';

describe('deployment identity', () => {
  it('GPUPROV_DEPLOYMENT wins over the namespace; the namespace is made safe', () => {
    expect(deploymentFromEnv({ GPUPROV_DEPLOYMENT: 'prod' }, 'default')).toBe('prod');
    expect(deploymentFromEnv({}, 'default')).toBe('default');
    expect(deploymentFromEnv({}, 'Team.ab12c')).toBe('team-ab12c');
  });

  it('a bad value is an InputError naming GPUPROV_DEPLOYMENT (the worker exits 2)', () => {
    for (const bad of ['Prod', 'a b', '-x', 'x-', 'a'.repeat(33), 'x_y', 'é']) {
      expect(deploymentProblem(bad), bad).toBeDefined();
      const err = (() => {
        try {
          return deploymentFromEnv({ GPUPROV_DEPLOYMENT: bad }, 'default');
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).field).toBe('GPUPROV_DEPLOYMENT');
    }
    expect(() => deploymentFromEnv({}, '...')).toThrow(InputError);
    expect(() => deploymentOf({ deployment: 'Bad' })).toThrow(/GPUPROV_DEPLOYMENT|deployment id/);
    expect(deploymentOf({})).toBe('default');
  });

  it('owned names differ per deployment and give the VM name back only to their own deployment', () => {
    const a = ownedName('gpu1', 'staging');
    const b = ownedName('gpu1', 'prod');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^gpuprov-gpu1-[0-9a-f]{6}$/);
    expect(vmNameOfOwnedName(a, 'staging')).toBe('gpu1');
    expect(vmNameOfOwnedName(a, 'prod')).toBeUndefined();
    expect(vmNameOfOwnedName(ownedName('my-vm-2', 'prod'), 'prod')).toBe('my-vm-2');
    expect(vmNameOfOwnedName('gpuprov-gpu1', 'prod')).toBeUndefined();
    expect(vmNameOfOwnedName(undefined, 'prod')).toBeUndefined();
  });

  it("explicit ids on a name-only cloud: unknown and own ones are deleted, another deployment's never", () => {
    const listed = [
      { id: 'mine', name: ownedName('gpu1', 'prod') },
      { id: 'theirs', name: ownedName('gpu1', 'staging') },
      { id: 'legacy', name: 'gpuprov-gpu1' },
    ];
    expect(deletableByName(['mine', 'theirs', 'legacy', 'unknown', 'mine'], listed, 'gpu1', 'prod')).toEqual(['mine', 'legacy', 'unknown']);
  });

  it("the activities replace the workflow's owner (the namespace) with the worker's deployment", () => {
    const spec = { vmName: 'v', owner: 'default', publicKeys: ['k2'], idempotencyKey: 'i', openPorts: [22] };
    expect(withWorkerKey(spec, 'k1', 'prod')).toEqual({ ...spec, owner: 'prod', publicKeys: ['k1', 'k2'] });
    expect(withWorkerKey(spec, 'k1')).toEqual({ ...spec, publicKeys: ['k1', 'k2'] });
  });
});
