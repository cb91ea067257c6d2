/**
 * GCP Spot VMs against the Compute and Billing Catalog fixtures: spot offers priced from the
 * catalog's Spot SKUs with the on-demand price beside them (and no extra call for an on-demand
 * plan), the spot insert's scheduling, a spot stock-out blocking only the spot offer, and
 * preemptions (`compute.instances.preempted` operations) reported by observe and inventory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { offerKey } from '../../../src/core/offers';
import type { Offer, Owned } from '../../../src/core/provider';
import { ownedName } from '../../../src/providers/deployment';
import { impliedPrice, startBillingFixture, type BillingFixture } from '../../fixtures/gcp/billing';
import { PREEMPTION_ROUTES } from '../../fixtures/gcp/preemptions';
import { CONFORMANCE_DEPLOYMENT, specFor } from '../conformance';
import { planned } from '../planned';
import { GCP_REQUEST, startGcpDouble, type GcpDouble } from './double';

const T4 = (region = 'us-central1', market: 'on-demand' | 'spot' = 'on-demand'): number =>
  impliedPrice('N1 Predefined Instance', 4, 15, 'Nvidia Tesla T4 GPU', 1, region, market);

describe('gcp spot', () => {
  let billing: BillingFixture;
  let dir: string;
  let d: GcpDouble;
  let n = 0;
  beforeAll(async () => {
    billing = await startBillingFixture();
    dir = mkdtempSync(join(tmpdir(), 'gpuprov-gcp-spot-'));
  });
  const start = async (): Promise<GcpDouble> =>
    (d = await startGcpDouble({ env: { GCP_BILLING_ENDPOINT: billing.url, GPUPROV_STATE_DIR: join(dir, `s${++n}`) } }));
  afterEach(async () => {
    await d?.close();
  });
  afterAll(async () => {
    await billing?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const calls = (path: RegExp): number => d.server.http.log.filter((r) => path.test(r.path)).length;

  it('plans spot offers at the Spot SKUs price with the on-demand price beside, from the same catalog pages', async () => {
    await start();
    const pagesBefore = billing.pages();
    const onDemand = await planned(d.provider, GCP_REQUEST);
    const pagesOnDemand = billing.pages() - pagesBefore;
    const computeOnDemand = d.server.http.log.length;
    expect(onDemand.every((o) => (o.market ?? 'on-demand') === 'on-demand')).toBe(true);
    expect(onDemand[0]).toMatchObject({ instanceType: 'n1-standard-4', pricePerHour: T4(), priceSource: 'api' });

    const spot = await planned(d.provider, { ...GCP_REQUEST, spot: 'only' });
    // Cached catalog, one more Compute call (the accelerator list): spot costs no price call.
    expect(billing.pages() - pagesBefore).toBe(pagesOnDemand);
    expect(d.server.http.log.length - computeOnDemand).toBe(computeOnDemand);
    expect(spot.map((o) => o.zone)).toEqual(onDemand.map((o) => o.zone));
    expect(spot[0]).toMatchObject({
      market: 'spot',
      spot: true,
      instanceType: 'n1-standard-4',
      pricePerHour: T4('us-central1', 'spot'),
      onDemandPricePerHour: T4(),
      priceSource: 'api',
    });
    expect(Date.parse(spot[0]!.pricedAt!)).toBeGreaterThan(0);
    expect(offerKey(spot[0]!)).toBe(`${offerKey(onDemand[0]!)}/spot`);

    const auto = await planned(d.provider, { ...GCP_REQUEST, spot: 'auto' });
    expect(auto.length).toBe(2 * onDemand.length);
    expect(auto[0]!.market).toBe('spot');
  });

  it('lists no spot offer without a live spot price (no dated spot table)', async () => {
    const table = await startGcpDouble();
    try {
      expect(await planned(table.provider, { ...GCP_REQUEST, spot: 'only' })).toEqual([]);
      expect((await planned(table.provider, { ...GCP_REQUEST, spot: 'auto' })).every((o) => o.market !== 'spot')).toBe(true);
    } finally {
      await table.close();
    }
  });

  const spotOffer = async (): Promise<Offer> => (await planned(d.provider, { ...GCP_REQUEST, spot: 'only' }))[0]!;

  it('creates a Spot VM: provisioningModel SPOT, deleted on preemption, TERMINATE on maintenance, no restart', async () => {
    await start();
    const offer = await spotOffer();
    const spec = specFor('spot-body');
    await d.provider.create(offer, await d.provider.prepare(offer, spec), spec);
    expect((d.server.inserts[0] as { scheduling: unknown }).scheduling).toEqual({
      provisioningModel: 'SPOT',
      instanceTerminationAction: 'DELETE',
      onHostMaintenance: 'TERMINATE',
      automaticRestart: false,
    });
  });

  it('a spot stock-out is Capacity for the spot offer only; a zone-wide refusal still blocks the zone', async () => {
    await start();
    const offer = await spotOffer();
    const spec = specFor('spot-out');
    const prepared = await d.provider.prepare(offer, spec);
    for (const fault of ['exhausted', 'exhaustedWithDetails'] as const) {
      d.armZone(offer.zone!, fault);
      await expect(d.provider.create(offer, prepared, { ...spec, idempotencyKey: `k-${fault}` })).rejects.toMatchObject({ kind: 'Capacity', block: 'offer' });
    }
    d.armZone(offer.zone!, {
      status: 503,
      body: { error: { code: 503, message: 'Not enough capacity.', errors: [{ message: 'x', domain: 'global', reason: 'insufficientCapacity' }] } },
    });
    await expect(d.provider.create(offer, prepared, { ...spec, idempotencyKey: 'k-sync' })).rejects.toMatchObject({ kind: 'Capacity', block: 'offer' });
    d.armZone(offer.zone!, 'opRate');
    await expect(d.provider.create(offer, prepared, { ...spec, idempotencyKey: 'k-rate' })).rejects.toMatchObject({ kind: 'Capacity', block: 'zone' });
    // The same stock-out on the on-demand offer keeps its zone scope.
    const [onDemand] = await planned(d.provider, GCP_REQUEST);
    d.armZone(onDemand!.zone!, 'exhausted');
    await expect(d.provider.create(onDemand!, prepared, { ...spec, idempotencyKey: 'k-od' })).rejects.toMatchObject({ kind: 'Capacity', block: 'zone' });
    d.server.disarmZone(onDemand!.zone!);
  });

  /** A running Spot VM of `vmName`, listed until Running. */
  async function runningSpot(vmName: string): Promise<{ name: string; zone: string; id: string }> {
    const offer = await spotOffer();
    const spec = specFor(vmName);
    const id = await d.provider.create(offer, await d.provider.prepare(offer, spec), spec);
    d.server.tick();
    d.server.tick();
    return { name: ownedName(vmName, CONFORMANCE_DEPLOYMENT), zone: offer.zone!, id };
  }

  it('observe: a preempted Spot VM carries preemption (notice, notice + 30 s, the operation), an on-demand observe asks nothing more', async () => {
    await start();
    const [od] = await planned(d.provider, GCP_REQUEST);
    const odSpec = specFor('od');
    await d.provider.create(od!, await d.provider.prepare(od!, odSpec), odSpec);
    const at = { cloud: 'gcp', region: 'us-central1', zone: od!.zone! };
    await d.provider.observe(at, 'od');
    expect(calls(/\/operations$/)).toBe(0);

    const vm = await runningSpot('sp1');
    expect((await d.provider.observe(at, 'sp1'))[0]!.preemption).toBeUndefined();
    expect(calls(/\/zones\/[^/]+\/operations$/)).toBe(1);
    const atMs = Date.parse('2026-12-04T01:00:00Z');
    d.server.preempt(vm.zone, vm.name, { atMs });
    const [seen] = await d.provider.observe(at, 'sp1');
    expect(seen).toMatchObject({
      id: vm.id,
      status: 'Stopped',
      preemption: {
        noticeAt: '2026-12-04T01:00:00.000Z',
        deadline: '2026-12-04T01:00:30.000Z',
        detail: 'compute.instances.preempted: DONE: Instance was preempted.',
      },
    });
  });

  it('inventory: one aggregated call per look; preempted instances carry it, ours deleted on preemption show Terminating for a while', async () => {
    await start();
    const kept = await runningSpot('kept');
    const gone = await runningSpot('gone');
    const old = await runningSpot('old');
    const foreign = d.twin('other-deployment');
    const offer = await spotOffer();
    const theirs = specFor('theirs');
    await foreign.create(offer, await foreign.prepare(offer, theirs), theirs);
    d.server.preempt(kept.zone, kept.name);
    d.server.preempt(gone.zone, gone.name, { deleted: true });
    d.server.preempt(old.zone, old.name, { deleted: true, atMs: Date.now() - 11 * 60_000 });
    d.server.preempt(offer.zone!, ownedName('theirs', 'other-deployment'), { deleted: true });

    const before = calls(new RegExp(`^${PREEMPTION_ROUTES.aggregatedOperations.replace(':project', '[^/]+')}$`));
    const inv = await d.provider.inventory({ cloud: 'gcp', region: 'us-central1' });
    expect(calls(/\/aggregated\/operations$/) - before).toBe(1);
    const by = new Map<string, Owned>(inv.map((o) => [o.vmName, o]));
    expect([...by.keys()].sort()).toEqual(['gone', 'kept']);
    expect(by.get('kept')).toMatchObject({ id: kept.id, status: 'Stopped', preemption: { detail: expect.stringContaining('compute.instances.preempted') } });
    expect(by.get('gone')).toMatchObject({ id: gone.id, status: 'Terminating', location: { zone: gone.zone }, preemption: { noticeAt: expect.any(String) } });
    const p = by.get('gone')!.preemption!;
    expect(Date.parse(p.deadline!) - Date.parse(p.noticeAt)).toBe(30_000);
    // Another region's look does not see them.
    expect(await d.provider.inventory({ cloud: 'gcp', region: 'us-east1' })).toEqual([]);
    // observe never reports the deleted one: a release waits for an empty observe.
    expect(await d.provider.observe({ cloud: 'gcp', region: 'us-central1', zone: gone.zone }, 'gone')).toEqual([]);
  });
});
