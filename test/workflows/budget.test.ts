import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServer } from '../harness/temporal';
import { FakeProvider } from '../harness/fake-provider';
import { spendSoFar } from '../../src/core/spend';
import type { VmStatus } from '../../src/core/api';
import { startLab, waitStage, type Lab } from './helpers';

// 3600 USD per hour is one dollar a second: a 2 USD budget warns ~1.6 s and ends ~2 s after the create.
const PRICEY = [{ cloud: 'fake', region: 'fake-a', instanceType: 'gpu-x', gpu: { model: 'H100', count: 1 }, pricePerHour: 3600, currency: 'USD' }];

describe.skipIf(!requireServer())('--budget on the dev server (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ fake: new FakeProvider({ offers: PRICEY }) });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('a tiny budget at a high price: a warning at 80 %, then the VM is torn down by itself', async () => {
    const h = await lab.start({ name: 'budget1', k8s: 'off', budgetUsd: 2 });
    const up = await waitStage(h, 'ready');
    expect(up.budget?.reachedAt).toBeUndefined();
    const end: VmStatus = await h.result();
    expect(end.stage).toBe('terminated');
    expect(end.budget).toMatchObject({ usd: 2 });
    const { warnedAt, reachedAt } = end.budget!;
    expect(warnedAt).toBeDefined();
    expect(reachedAt).toBeDefined();
    expect(Date.parse(reachedAt!)).toBeGreaterThanOrEqual(Date.parse(warnedAt!));
    // The budget was reached (workflow time), and the teardown stopped the billing soon after.
    const created = Date.parse(end.attempts[0]!.createdAt!);
    expect(Date.parse(reachedAt!) - created).toBeGreaterThanOrEqual(2_000);
    expect(spendSoFar(end, Date.now()).totalUsd).toBeGreaterThanOrEqual(2);
    expect(lab.fake.liveCount('budget1')).toBe(0);
  });

  it('without a budget nothing is torn down and no budget is shown', async () => {
    const h = await lab.start({ name: 'budget2', k8s: 'off' });
    const s = await waitStage(h, 'ready');
    expect(s.budget).toBeUndefined();
    await h.signal('teardown');
    expect((await h.result()).stage).toBe('terminated');
  });
});
