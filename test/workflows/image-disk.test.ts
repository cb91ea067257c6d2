/**
 * `--image`/`--disk-gb` through a launch on the dev server: the spec reaches the cloud's create,
 * a cloud whose capabilities cannot honour them is skipped by the plan, and a launch whose every
 * cloud is skipped fails naming the cloud and the flag.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeProvider, defaultFakeOffers } from '../harness/fake-provider';
import { requireServer } from '../harness/temporal';
import { startLab, waitStage, type Lab } from './helpers';

const IMAGE = 'nvidia/cuda:12.4.1-runtime-ubuntu22.04';

describe.skipIf(!requireServer())('--image and --disk-gb on the dev server (FakeProvider)', () => {
  let lab: Lab;
  const plain = new FakeProvider({ name: 'plain', offers: defaultFakeOffers('plain') });
  beforeAll(async () => {
    const fake = new FakeProvider();
    fake.caps = {
      ...fake.caps,
      image: { kind: 'container', pattern: '^[a-z0-9./:-]+$', format: 'a container image', example: IMAGE },
      diskGb: { min: 10, max: 100 },
    };
    lab = await startLab({ fake, providers: [fake, plain] });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('the image and disk size reach create; a cloud that cannot use them is skipped', async () => {
    const h = await lab.start({ name: 'img1', k8s: 'off', clouds: ['plain', 'fake'], image: IMAGE, diskGb: 50 });
    const s = await waitStage(h, 'ready');
    expect(s.offer?.cloud).toBe('fake');
    expect(s.spec).toMatchObject({ image: IMAGE, diskGb: 50 });
    expect(lab.fake.callsOf('create').filter((c) => c.vmName === 'img1')).toEqual([expect.objectContaining({ image: IMAGE, diskGb: 50 })]);
    expect(plain.callsOf('create')).toEqual([]);
    await h.signal('teardown');
    await h.result();
  });

  it('a disk size outside every cloud’s range fails the launch, naming the cloud and the flag', async () => {
    const h = await lab.start({ name: 'img2', k8s: 'off', clouds: ['plain', 'fake'], diskGb: 500 });
    const err = await h.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const message = String((err as WorkflowFailedError).cause?.message);
    expect(message).toContain('plain cannot use --disk-gb');
    expect(message).toContain("--disk-gb 500 is out of fake's range");
    expect(lab.fake.callsOf('create').filter((c) => c.vmName === 'img2')).toEqual([]);
  });
});
