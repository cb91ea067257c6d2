/**
 * The AWS adapter on moto through `planOffers`, the one place offers are matched: `--gpu H100:1`
 * means exactly one GPU, so the 8-GPU p5.48xlarge (~$55/h) is never planned for it; `H100:8+`
 * plans it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import type { SshIdentity } from '../../../src/ssh/identity';
import type { GpuRequest } from '../../../src/core/provider';
import { LocalProvider } from '../../../src/providers/local';
import { ProviderRegistry } from '../../../src/providers/registry';
import { motoMissing } from '../../harness/moto';
import { startAwsDouble, type AwsDouble } from './double';

// planOffers never touches SSH; the identity only satisfies the factory.
const ssh: SshIdentity = { privateKey: '', privateKeyPath: '/nonexistent', publicKey: 'ssh-ed25519 AAAAplanonly plan@test', fingerprint: 'SHA256:planonly' };

describe.skipIf(motoMissing())('planOffers with the AWS adapter on moto', () => {
  let d: AwsDouble;
  let activities: ReturnType<typeof createActivities>;

  beforeAll(async () => {
    d = await startAwsDouble();
    // The local cloud (plan starts no process) is a second cloud for the skip case.
    const local = new LocalProvider({ root: '/nonexistent/gpuprov-plan-offers' });
    activities = createActivities({ registry: new ProviderRegistry([d.provider, local]), ssh, owner: 'test' });
  });
  afterAll(async () => {
    await d?.close();
  });

  const ask = (gpu: GpuRequest, clouds = ['aws']) => activities.planOffers({ request: { vmName: 'plan', k8s: false, gpu }, clouds });

  it('H100:1 plans no 8-GPU type; the skip says how to ask for it', async () => {
    const failure = await ask({ model: 'H100', count: 1 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(failure?.message).toContain('no cloud can serve this request');
    expect(failure?.message).toContain('aws: no offer has exactly 1 H100; GPU counts here: 8 (p5.48xlarge); ask --gpu H100:8, or H100:1+');
  });

  it('a GPU only another cloud has: AWS is skipped with the reason, the other cloud plans', async () => {
    const out = await ask({ model: 'SIM', count: 1 }, ['aws', 'local']);
    expect(out.offers.every((o) => o.gpu?.count === 1)).toBe(true);
    expect(out.offers.map((o) => o.cloud)).not.toContain('aws');
    expect(out.skipped).toEqual([{ cloud: 'aws', kind: 'InvalidRequest', message: expect.stringMatching(/^no SIM here; GPUs here: T4, /) }]);
  });

  it('T4:1 plans only one-GPU types, cheapest first', async () => {
    const out = await ask({ model: 'T4', count: 1 });
    expect(out.offers.map((o) => o.instanceType)).toEqual(['g4dn.xlarge', 'g4dn.2xlarge']);
    expect(out.offers.every((o) => o.gpu?.count === 1)).toBe(true);
    expect(Object.keys(out.capabilities)).toEqual(['aws']);
  });

  it('H100:8+ and H100:1+ plan the p5.48xlarge', async () => {
    for (const gpu of [
      { model: 'H100', count: 8, atLeast: true },
      { model: 'H100', count: 1, atLeast: true },
    ]) {
      const out = await ask(gpu);
      expect(out.offers.map((o) => `${o.instanceType}:${o.gpu?.count}:${o.pricePerHour}`)).toEqual(['p5.48xlarge:8:55.04']);
      expect(out.skipped).toEqual([]);
    }
  });
});
