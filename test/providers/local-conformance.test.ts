import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runConformance } from './conformance';
import { countLive } from '../../src/providers/local';
import { describeEachSshd, freshId, makeCloud } from './local/helpers';

/** Per-VM side state directories (`vms/<region>/<deployment>/<vm>`) under the root. */
function countVmDirs(root: string): number {
  const vms = join(root, 'vms');
  if (!existsSync(vms)) return 0;
  let n = 0;
  for (const region of readdirSync(vms)) for (const owner of readdirSync(join(vms, region))) n += readdirSync(join(vms, region, owner)).length;
  return n;
}

describeEachSshd('local cloud (real SSH server)', (mode) => {
  runConformance({
    name: `local/${mode}`,
    make: async () => {
      const cloud = await makeCloud(`conformance-${mode}`, mode);
      return {
        provider: cloud.provider,
        twin: (deployment) => cloud.twin(deployment),
        countSide: async () => countVmDirs(cloud.root),
        request: { vmName: 'cf-local', k8s: false },
        countLive: async () => countLive(cloud.root),
        arm: async (kind, primitive) => cloud.setFaults([{ id: freshId(), primitive, error: kind, times: 1 }]),
        kinds: [
          { kind: 'Capacity', primitive: 'create' },
          { kind: 'Quota', primitive: 'create' },
          { kind: 'Unavailable', primitive: 'create' },
          { kind: 'Failed', primitive: 'create' },
          { kind: 'Credentials', primitive: 'plan' },
          { kind: 'InvalidRequest', primitive: 'prepare' },
          { kind: 'Transient', primitive: 'observe' },
          { kind: 'Transient', primitive: 'delete' },
          { kind: 'Transient', primitive: 'cleanup' },
        ],
        nativeIdempotency: true,
        maxPolls: 50,
        pollDelayMs: 100,
        close: () => cloud.close(),
      };
    },
  });
});
