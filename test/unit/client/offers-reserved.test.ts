/**
 * `provision offers --reserved` and `offers --capacity-block` against the fake cloud's
 * reservations and blocks for sale: the tables, and --json as one object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import { ProviderRegistry } from '../../../src/providers/registry';
import { loadOrCreateSshIdentity, type SshIdentity } from '../../../src/ssh';
import { runTestCli, type CliResult } from '../../harness/cli';
import { FakeProvider } from '../../harness/fake-provider';
import { blockOnSale } from '../../harness/fake-reserved';
import { requireServer, startTestWorker, type TestWorker } from '../../harness/temporal';

describe.skipIf(!requireServer())('provision offers --reserved / --capacity-block', () => {
  let root: string;
  let ssh: SshIdentity;
  let worker: TestWorker;
  const fake = new FakeProvider({
    reserved: {
      reservations: [
        {
          info: { id: 'cr-open', kind: 'capacity-reservation', total: 2, free: 2 },
          region: 'fake-a',
          zone: 'fake-a1',
          instanceType: 'gpu-1',
          gpu: { model: 'H100', count: 1 },
          onDemandPricePerHour: 2,
        },
        {
          info: { id: 'cb-later', kind: 'capacity-block', total: 1, free: 1, start: '2030-01-01T00:00:00.000Z', end: '2030-01-02T00:00:00.000Z' },
          region: 'fake-b',
          instanceType: 'gpu-2',
          gpu: { model: 'H100', count: 1 },
        },
      ],
      forSale: [blockOnSale('cbo-1')],
    },
  });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-offers-reserved-'));
    ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([fake]), ssh, owner: 'default' }) });
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const offers = (...args: string[]): Promise<CliResult> => runTestCli(root, worker.taskQueue, ['offers', ...args]);

  it('lists the reservations with free of total, window and price', async () => {
    const r = await offers('--reserved', '--gpu', 'H100');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/RESERVATION\s+KIND\s+FREE\s+WINDOW\s+PRICE\s+ON-DEMAND/);
    expect(r.out).toMatch(/cr-open\s+capacity-reservation\s+2\/2\s+open\s+no extra charge: billed with the reservation\s+\$2\.00\/h/);
    expect(r.out).toContain('2030-01-01T00:00:00.000Z → 2030-01-02T00:00:00.000Z');
    expect(r.out).toContain('2 reservation(s)');
    expect(r.out).toContain('--reservation cr-open');
  });

  it('lists them as one JSON object', async () => {
    const r = await offers('--reserved', '--json');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { offers: { market: string; reservation: { id: string; free: number } }[] };
    expect(j.offers.map((o) => [o.market, o.reservation.id, o.reservation.free])).toEqual([
      ['reserved', 'cr-open', 2],
      ['reserved', 'cb-later', 1],
    ]);
  });

  it('lists the capacity blocks on sale with their upfront price', async () => {
    const r = await offers('--capacity-block', '--duration', '24h', '--gpu', 'H100');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/cbo-1\s+fake\s+fake-a\s+-\s+gpu-1\s+1\s+2030-01-01T00:00:00.000Z\s+2030-01-02T00:00:00.000Z\s+24\s+\$700\.00/);
    expect(r.out).toContain('--capacity-block cbo-1 --duration 24h --yes');
    const none = await offers('--capacity-block', '--duration', '48h');
    expect(none.out).toContain('0 capacity block offering(s)');
    const j = await offers('--capacity-block', '--duration', '24h', '--json');
    expect(JSON.parse(j.out)).toMatchObject({ offerings: [{ offeringId: 'cbo-1', upfrontPrice: 700 }], skipped: [] });
  });
});
