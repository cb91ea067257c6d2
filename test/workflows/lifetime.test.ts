import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teardownSignal } from '../../src/core/api';
import { requireServer } from '../harness/temporal';
import { startLab, status, waitFor, type Lab } from './helpers';

describe.skipIf(!requireServer())('a long-lived VM', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('continues as new when its history grows, keeping its status, and still tears down', async () => {
    const h = await lab.start({ name: 'can1', k8s: 'off' }, { healthIntervalMs: 200, continueAsNewAfterEvents: 60 });
    const ready = await waitFor(h, (s) => s.stage === 'ready', 'ready');
    const firstRun = (await h.describe()).runId;
    // Health checks every 200 ms add events until the run continues as new.
    const deadline = Date.now() + 60_000;
    let runId = firstRun;
    while (runId === firstRun && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      runId = (await h.describe()).runId;
    }
    expect(runId).not.toBe(firstRun);
    const s = await status(h);
    expect(s).toMatchObject({ stage: 'ready', instanceIds: ready.instanceIds, readyAt: ready.readyAt, hostKeyFingerprint: ready.hostKeyFingerprint });
    expect(lab.fake.liveCount('can1')).toBe(1);
    await h.signal(teardownSignal);
    const end = await h.result();
    expect(end.stage).toBe('terminated');
    expect(lab.fake.liveCount('can1')).toBe(0);
  });
});
