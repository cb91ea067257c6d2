/**
 * The AWS adapter through the shared conformance battery, against moto. Errors moto cannot
 * produce (capacity, quota, credentials, throttling) are armed as real EC2 error responses
 * (see test/providers/aws/double.ts).
 */
import { describe } from 'vitest';
import { runConformance } from './conformance';
import { startAwsDouble } from './aws/double';
import { motoMissing } from '../harness/moto';

describe.skipIf(motoMissing())('aws on moto', () => {
  runConformance({
    name: 'aws',
    make: async () => {
      const d = await startAwsDouble();
      return {
        provider: d.provider,
        request: { vmName: 'conformance', k8s: false },
        countLive: () => d.countLive(),
        countSide: () => d.countSide(),
        twin: (deployment) => d.makeProvider({ deployment }),
        arm: (kind, primitive) => d.arm(kind, primitive),
        kinds: [
          { kind: 'Capacity', primitive: 'create' },
          { kind: 'Quota', primitive: 'create' },
          { kind: 'Unavailable', primitive: 'create' },
          { kind: 'Failed', primitive: 'create' },
          { kind: 'InvalidRequest', primitive: 'create' },
          { kind: 'Credentials', primitive: 'plan' },
          { kind: 'Credentials', primitive: 'observe' },
          { kind: 'Transient', primitive: 'observe' },
          { kind: 'Transient', primitive: 'delete' },
          { kind: 'Transient', primitive: 'cleanup' },
          { kind: 'Credentials', primitive: 'prepare' },
        ],
        // moto ignores ClientToken; the adapter's idempotency tag keeps the guarantee (see create).
        nativeIdempotency: true,
        maxPolls: 5,
        close: () => d.close(),
      };
    },
  });
});
