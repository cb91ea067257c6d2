/**
 * `provision offers --gpu A100 --json` as a user types it, against the Vast.ai fixture's realistic
 * market (hundreds of asks, most of them cheaper consumer GPUs, a few A100s): the search asks the
 * API for A100s by `gpu_name`, so the A100s are found, each with its live price's source and time.
 * The text output shows the PRICED column.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import { runTestCli, type CliResult } from '../../harness/cli';
import type { Offer } from '../../../src/core/provider';
import { VastProvider } from '../../../src/providers/vastai';
import { ProviderRegistry } from '../../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../../src/ssh';
import { API_KEY, startVastServer, type VastServer } from '../../fixtures/vastai/server';
import { requireServer, startTestWorker } from '../../harness/temporal';

describe.skipIf(!requireServer())('provision offers --gpu A100 on a Vast.ai market of hundreds of asks', () => {
  let root: string;
  let vast: VastServer;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-offers-vast-'));
    vast = await startVastServer();
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const registry = new ProviderRegistry([new VastProvider({ apiKey: API_KEY, baseUrl: vast.url })]);
    worker = await startTestWorker({ activities: createActivities({ registry, ssh, owner: 'default' }) });
  });
  afterAll(async () => {
    await worker?.stop();
    await vast?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const offers = (...args: string[]): Promise<CliResult> => runTestCli(root, worker.taskQueue, ['offers', ...args]);

  it('--json finds the A100s, priced from the API with the time', async () => {
    const a100s = vast.asks.filter((a) => a.gpu_name.startsWith('A100'));
    expect(vast.asks.length).toBeGreaterThan(300);
    expect(a100s.length / vast.asks.length).toBeLessThan(0.05);
    const before = vast.http.requests.length;
    const r = await offers('--gpu', 'A100', '--json');
    expect(r.code, r.err).toBe(0);
    const plan = JSON.parse(r.out) as { offers: Offer[]; skipped: unknown[] };
    expect(plan.skipped).toEqual([]);
    expect(plan.offers.length).toBeGreaterThan(0);
    const ids = new Set(a100s.map((a) => a.id));
    for (const o of plan.offers) {
      expect(o).toMatchObject({ cloud: 'vastai', gpu: { count: 1 }, priceSource: 'api' });
      expect(o.gpu?.model).toMatch(/^A100/);
      expect(ids.has((o.extra as { askId: number }).askId)).toBe(true);
      expect(Date.now() - Date.parse(o.pricedAt!)).toBeLessThan(3_600_000);
    }
    // The model is filtered by the API, not by gpuprov after the cheapest asks of any model came back.
    const search = vast.http.requests.slice(before).find((q) => q.method === 'POST' && q.path.startsWith('/api/v0/bundles'));
    expect((search?.body as { gpu_name?: unknown }).gpu_name).toEqual({ in: expect.arrayContaining(['A100 PCIE', 'A100 SXM4']) });
  });

  it('the text table shows where each price came from', async () => {
    const r = await offers('--gpu', 'A100');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/PRICE\s+PRICED/);
    expect(r.out).toMatch(/A100[^\n]*\$\d+\.\d+\/h\s+api \d+s/);
  });
});
