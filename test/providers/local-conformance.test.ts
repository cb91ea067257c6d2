import { runConformance } from './conformance';
import { countLive } from '../../src/providers/local';
import { describeEachSshd, freshId, makeCloud } from './local/helpers';

describeEachSshd('local cloud (real SSH server)', (mode) => {
  runConformance({
    name: `local/${mode}`,
    make: async () => {
      const cloud = await makeCloud(`conformance-${mode}`, mode);
      return {
        provider: cloud.provider,
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
