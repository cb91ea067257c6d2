/**
 * `--spot` through a launch on the dev server: under `auto` a spot offer that answers Capacity
 * hands the launch to on-demand, on the same type and region (the spot answer blocks spot
 * offers only); under `only` a cloud that sells no spot is skipped and the launch fails naming
 * the kind and that no spot offer is left.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptRecord } from '../../src/core/api';
import { marketOf, offerKey } from '../../src/core/offers';
import { blockFor, isBlocked } from '../../src/core/search';
import { FakeProvider, defaultFakeOffers } from '../harness/fake-provider';
import { requireServer } from '../harness/temporal';
import { startLab, status, waitStage, type Lab } from './helpers';

/** The blocks the attempts left, as the search made them. */
const blocksOf = (attempts: readonly AttemptRecord[]) => attempts.flatMap((a) => (a.blocked ? [blockFor(a.offer, a.blocked, a.kind ?? 'Failed')] : []));

describe.skipIf(!requireServer())('--spot on the dev server (FakeProvider with a spot market)', () => {
  let lab: Lab;
  // A second cloud that sells no spot: skipped under `only`, planned on-demand under `auto`.
  const plain = new FakeProvider({ name: 'plain', offers: defaultFakeOffers('plain').map((o) => ({ ...o, pricePerHour: (o.pricePerHour ?? 0) + 10 })) });
  beforeAll(async () => {
    const fake = new FakeProvider({ spot: { noCapacity: true } });
    lab = await startLab({ fake, providers: [fake, plain] });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('--spot auto: every spot offer answers Capacity → the launch goes on to on-demand and is Ready there', async () => {
    const planned = plain.callsOf('plan').length;
    const h = await lab.start({ name: 'spotauto', k8s: 'off', spot: 'auto' });
    const s = await waitStage(h, 'ready');
    const tried = s.attempts.map((a) => [offerKey(a.offer), a.outcome, a.kind]);
    expect(tried).toEqual([
      ['fake/fake-a/-/gpu-1/spot', 'failed', 'Capacity'],
      ['fake/fake-a/-/gpu-2/spot', 'failed', 'Capacity'],
      ['fake/fake-b/-/gpu-1/spot', 'failed', 'Capacity'],
      ['fake/fake-b/-/gpu-2/spot', 'failed', 'Capacity'],
      // The cheapest on-demand offer: the same type and region as the first spot answer.
      ['fake/fake-a/-/gpu-1', 'ready', undefined],
    ]);
    expect(s.attempts[0]!.offer).toMatchObject({ market: 'spot', pricePerHour: 0.8, onDemandPricePerHour: 2 });
    expect(marketOf(s.offer!)).toBe('on-demand');
    expect(isBlocked(s.offer!, blocksOf(s.attempts))).toBe(false);
    expect(lab.fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'spotauto').map((c) => [c.market ?? 'on-demand', c.error])).toEqual([
      ['spot', 'Capacity'],
      ['spot', 'Capacity'],
      ['spot', 'Capacity'],
      ['spot', 'Capacity'],
      ['on-demand', undefined],
    ]);
    expect(lab.fake.liveCount('spotauto')).toBe(1);
    expect(s.spec.spot).toBe('auto');
    // The cloud that sells no spot was still planned (on-demand), behind every spot offer.
    expect(plain.callsOf('plan').length).toBeGreaterThan(planned);
    await h.signal('teardown');
    await h.result();
    expect(lab.fake.liveCount('spotauto')).toBe(0);
  });

  it('--spot only with no spot capacity: fails with Capacity and "no spot offer left"; the cloud without spot is skipped; no on-demand offer is blocked or created', async () => {
    const planned = plain.callsOf('plan').length;
    const h = await lab.start({ name: 'spotonly', k8s: 'off', spot: 'only' });
    const err = await h.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as { type?: string; message: string; details?: unknown[] };
    expect(cause.type).toBe('LaunchFailed');
    expect(cause.message).toContain('no spot offer left');
    const attempts = (cause.details?.[0] as { attempts: AttemptRecord[] }).attempts;
    expect(attempts.map((a) => [offerKey(a.offer), a.kind])).toEqual([
      ['fake/fake-a/-/gpu-1/spot', 'Capacity'],
      ['fake/fake-a/-/gpu-2/spot', 'Capacity'],
      ['fake/fake-b/-/gpu-1/spot', 'Capacity'],
      ['fake/fake-b/-/gpu-2/spot', 'Capacity'],
    ]);
    const s = await status(h);
    expect(s.error?.kind).toBe('Capacity');
    // The spot answers block their spot offers, never the on-demand offers of the same keys.
    const blocks = blocksOf(attempts);
    for (const o of defaultFakeOffers()) expect(isBlocked(o, blocks), offerKey(o)).toBe(false);
    for (const a of attempts) expect(isBlocked(a.offer, blocks)).toBe(true);
    expect(lab.fake.liveCount('spotonly')).toBe(0);
    // Skipped before its plan was asked: it sells no spot.
    expect(plain.callsOf('plan')).toHaveLength(planned);
    expect(plain.calls.filter((c) => c.primitive === 'create' && c.vmName === 'spotonly')).toEqual([]);
  });
});
