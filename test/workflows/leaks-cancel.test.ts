import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelSignal, teardownSignal } from '../../src/core/api';
import { requireServer, testEnv } from '../harness/temporal';
import { startLab, status, waitFor, waitStage, type Lab } from './helpers';

describe.skipIf(!requireServer())('leaks and cancellation on the dev server (FakeProvider)', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(async () => {
    await lab?.stop();
  });

  it('teardown failing past its budget → stage leaked (query + search attribute) → heals → zero instances, search continues', async () => {
    // Offer 1 fails with Capacity after creating (ambiguous); its compensation cannot delete.
    lab.fake.script(
      { primitive: 'create', region: 'fake-a', instanceType: 'gpu-1', error: 'Capacity', ambiguous: true },
      { primitive: 'delete', region: 'fake-a', error: 'Transient', times: -1 },
    );
    const h = await lab.start({ name: 'leak1', k8s: 'off' });
    const leaked = await waitStage(h, 'leaked');
    expect(leaked.leak?.location.region).toBe('fake-a');
    expect(leaked.leak?.tries).toBe(1);
    expect(lab.fake.liveCount('leak1')).toBe(1);

    const client = await testEnv().client();
    await waitForVisibility(async () => {
      const ids: string[] = [];
      for await (const wf of client.workflow.list({ query: `GpuprovStage = 'leaked' AND WorkflowId = '${h.workflowId}'` })) ids.push(wf.workflowId);
      return ids.includes(h.workflowId);
    });

    lab.fake.clearRules();
    await h.signal(teardownSignal);
    const s = await waitStage(h, 'ready');
    expect(s.leak).toBeUndefined();
    expect(s.attempts.map((a) => [a.outcome, a.compensated])).toEqual([
      ['failed', true],
      ['ready', false],
    ]);
    expect(lab.fake.live('leak1').map((i) => i.instanceType)).toEqual(['gpu-2']);
    await h.signal(teardownSignal);
    await h.result();
    expect(lab.fake.liveCount('leak1')).toBe(0);
  });

  it('cancel during planning → zero instances', async () => {
    lab.fake.setDelay('plan', 1_500);
    const h = await lab.start({ name: 'cplan', k8s: 'off' });
    await waitStage(h, 'planning');
    await h.signal(cancelSignal);
    const s = await h.result();
    lab.fake.setDelay('plan', 0);
    expect(s.stage).toBe('cancelled');
    expect(lab.fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'cplan')).toEqual([]);
    expect(lab.fake.liveCount('cplan')).toBe(0);
  });

  it('cancel during creating → the create finishes, is compensated → zero instances', async () => {
    lab.fake.setDelay('create', 1_500);
    const h = await lab.start({ name: 'ccreate', k8s: 'off' });
    await waitStage(h, 'creating');
    await h.signal(cancelSignal);
    const s = await h.result();
    lab.fake.setDelay('create', 0);
    expect(s.stage).toBe('cancelled');
    expect(s.attempts.map((a) => [a.outcome, a.compensated])).toEqual([['cancelled', true]]);
    expect(lab.fake.calls.filter((c) => c.primitive === 'create' && c.vmName === 'ccreate')).toHaveLength(1);
    expect(lab.fake.liveCount('ccreate')).toBe(0);
  });

  it('cancel during booting → zero instances', async () => {
    lab.fake.setBootMs(60_000);
    const h = await lab.start({ name: 'cboot', k8s: 'off' });
    await waitStage(h, 'booting');
    await h.signal(cancelSignal);
    const s = await h.result();
    lab.fake.setBootMs(0);
    expect(s.stage).toBe('cancelled');
    expect(lab.fake.liveCount('cboot')).toBe(0);
  });

  it('cancel during connecting (SSH never answers) → zero instances', async () => {
    lab.fake.script({ primitive: 'probe', error: 'Transient', times: -1 });
    const h = await lab.start({ name: 'cconn', k8s: 'off' });
    await waitStage(h, 'connecting');
    await h.signal(cancelSignal);
    const s = await h.result();
    lab.fake.clearRules();
    expect(s.stage).toBe('cancelled');
    expect(lab.fake.liveCount('cconn')).toBe(0);
  });

  it('cancel when ready → torn down → zero instances', async () => {
    const h = await lab.start({ name: 'cready', k8s: 'off' });
    await waitStage(h, 'ready');
    expect(lab.fake.liveCount('cready')).toBe(1);
    await h.signal(cancelSignal);
    const s = await h.result();
    expect(s.stage).toBe('cancelled');
    expect(lab.fake.liveCount('cready')).toBe(0);
  });

  it("Temporal's own cancel while booting → compensated, execution Canceled, zero instances", async () => {
    lab.fake.setBootMs(60_000);
    const h = await lab.start({ name: 'tcancel', k8s: 'off' });
    await waitStage(h, 'booting');
    await h.cancel();
    await expect(h.result()).rejects.toThrow();
    lab.fake.setBootMs(0);
    const d = await h.describe();
    expect(d.status.name).toBe('CANCELLED');
    expect(lab.fake.liveCount('tcancel')).toBe(0);
  });

  it('TTL expiry → torn down', async () => {
    const h = await lab.start({ name: 'ttl1', k8s: 'off', ttlMs: 1_500 });
    const r = await waitStage(h, 'ready');
    expect(r.ttlExpiresAt).toBeDefined();
    const s = await h.result();
    expect(s.stage).toBe('terminated');
    expect(lab.fake.liveCount('ttl1')).toBe(0);
  });

  it('instance vanishes while Ready → stage lost', async () => {
    const h = await lab.start({ name: 'lost1', k8s: 'off' });
    const r = await waitStage(h, 'ready');
    lab.fake.vanish(r.instanceIds[0]!);
    const s = await h.result();
    expect(s.stage).toBe('lost');
    expect((await status(h)).stage).toBe('lost');
    expect(lab.fake.liveCount('lost1')).toBe(0);
  });

  it('status query is a full snapshot', async () => {
    const h = await lab.start({ name: 'snap1', k8s: 'off', gpu: { model: 'H100', count: 1 } });
    const s = await waitFor(h, (x) => x.stage === 'ready', 'ready');
    expect(s).toMatchObject({ name: 'snap1', stage: 'ready', spec: { name: 'snap1' }, location: { cloud: 'fake', region: 'fake-a' } });
    expect(s.endpoint?.port).toBeGreaterThan(0);
    expect(s.hostKeyFingerprint).toMatch(/^SHA256:/);
    expect(s.readyAt).toBeDefined();
    await h.signal(teardownSignal);
    await h.result();
  });
});

async function waitForVisibility(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('visibility did not show the workflow in time');
}
