import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors';
import { NebiusProvider, fromEnv } from '../../src/providers/nebius';
import { serviceCtor } from '../../src/providers/nebius/api';
import { classify, decodeStatusDetails } from '../../src/providers/nebius/errors';
import { STATUS, mapStatus, priceAndOrder, toObserved } from '../../src/providers/nebius/map';
import { offerKey } from '../../src/core/offers';
import { runConformance, specFor } from './conformance';
import { FAULTS, PROJECTS, TOKEN, startNebiusServer, type FaultName } from '../fixtures/nebius/server';
import { startNebiusDouble, type NebiusDouble } from './nebius/double';
import { planned, whyNothing } from './planned';

runConformance({
  name: 'nebius',
  make: async () => {
    const d = await startNebiusDouble();
    return {
      ...d,
      request: { vmName: 'cf', gpu: { model: 'H100', count: 1 }, k8s: false },
      kinds: [
        { kind: 'Capacity', primitive: 'create' },
        { kind: 'Quota', primitive: 'create' },
        { kind: 'Credentials', primitive: 'observe' },
        { kind: 'Transient', primitive: 'plan' },
        { kind: 'InvalidRequest', primitive: 'create' },
      ],
      tick: async () => d.server.tick(),
      nativeIdempotency: true,
      maxPolls: 6,
    };
  },
});

/** A gRPC error as @grpc/grpc-js raises it, with the fixture's real trailer bytes. */
function grpcError(name: FaultName): unknown {
  const f = FAULTS[name];
  return {
    code: f.code,
    details: f.message,
    message: `${f.code} X: ${f.message}`,
    metadata: { get: (k: string) => (k === 'grpc-status-details-bin' ? [encode(name)] : []) },
  };
}
let encoded: Map<FaultName, Buffer>;
const encode = (n: FaultName): Buffer => encoded.get(n)!;

describe('nebius: classification of documented gRPC failures', () => {
  beforeAll(async () => {
    // Capture the exact trailer bytes the fixture sends for each fault through a real call.
    encoded = new Map();
    const server = await startNebiusServer();
    const Ctor = serviceCtor('nebius.compute.v1.InstanceService');
    const client = new Ctor(server.endpoint, grpc.credentials.createInsecure());
    for (const name of Object.keys(FAULTS) as FaultName[]) {
      if ('asOperation' in FAULTS[name] || 'late' in FAULTS[name]) continue;
      server.arm('InstanceService.Get', name);
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${TOKEN}`);
      const err = await new Promise<grpc.ServiceError>((resolve) =>
        (client as unknown as { Get: (r: object, m: grpc.Metadata, cb: (e: grpc.ServiceError) => void) => void }).Get({ id: 'x' }, md, resolve),
      );
      encoded.set(name, (err.metadata.get('grpc-status-details-bin')[0] as Buffer | undefined) ?? Buffer.alloc(0));
    }
    client.close();
    await server.close();
  });

  const table: [FaultName, string, string | undefined][] = [
    ['capacity', 'Capacity', undefined],
    ['quota', 'Quota', 'region'],
    ['quotaText', 'Quota', 'region'],
    ['rateLimited', 'Transient', undefined],
    ['rateLimitedNoDelay', 'Transient', undefined],
    ['unauthenticated', 'Credentials', undefined],
    ['permissionDenied', 'Credentials', undefined],
    ['unavailable', 'Transient', undefined],
    ['internal', 'Transient', undefined],
    ['badRequest', 'InvalidRequest', undefined],
  ];
  it.each(table)('%s → %s', (name, kind, block) => {
    const e = classify(grpcError(name), 'InstanceService.Create');
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.kind).toBe(kind);
    expect(e.block).toBe(block);
  });

  it('RetryInfo gives retryAfterMs; absent without it', () => {
    expect(classify(grpcError('rateLimited')).retryAfterMs).toBe(7000);
    expect(classify(grpcError('rateLimitedNoDelay')).retryAfterMs).toBeUndefined();
  });

  it('the ServiceError code is part of the error code; RESOURCE_EXHAUSTED without details is capacity', () => {
    expect(classify(grpcError('capacity')).code).toBe('RESOURCE_EXHAUSTED/NotEnoughResources');
    expect(classify({ code: 8, details: 'Not enough resources', metadata: { get: () => [] } }).kind).toBe('Capacity');
    expect(classify({ code: 9, details: 'disk busy', metadata: { get: () => [] } }).kind).toBe('Failed');
  });

  it('garbage trailers do not throw', () => {
    expect(decodeStatusDetails(Buffer.from([0xff, 0xff, 0xff]))).toEqual([]);
  });
});

describe('nebius: mapping', () => {
  it('status table covers every documented state', () => {
    expect(Object.keys(STATUS).sort()).toEqual(['CREATING', 'DELETING', 'ERROR', 'RUNNING', 'STARTING', 'STOPPED', 'STOPPING', 'UNSPECIFIED', 'UPDATING']);
    expect(mapStatus('STOPPED', true)).toBe('Pending');
    expect(mapStatus('STOPPED', false)).toBe('Stopped');
    expect(mapStatus('ERROR', false)).toBe('Failed');
  });
  it('strips the CIDR suffix of the public address', () => {
    const o = toObserved(
      {
        metadata: { id: 'i1', parent_id: 'p', name: 'n', labels: {} },
        spec: null,
        status: {
          state: 'RUNNING',
          reconciling: false,
          network_interfaces: [{ name: 'eth0', ip_address: { address: '10.0.0.2' }, public_ip_address: { address: '198.51.100.7/32' } }],
        },
      },
      'eu-north1',
      '2026-12-04T00:00:00.000Z',
    );
    expect(o.endpoint).toEqual({ host: '198.51.100.7', port: 22, user: 'ubuntu' });
  });
});

describe('nebius: vendor specifics against the fixture', () => {
  let d: NebiusDouble;
  beforeAll(async () => {
    d = await startNebiusDouble();
  });
  afterAll(async () => d.close());

  it('plans one offer per region with calculator prices, cheapest first, across pages', async () => {
    const offers = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    expect(offers.map((o) => `${o.region}/${o.instanceType}/${o.pricePerHour}`).sort()).toEqual([
      'eu-north1/gpu-h100-sxm:1gpu-16vcpu-200gb/2.95',
      'us-central1/gpu-h100-sxm:1gpu-16vcpu-200gb/2.95',
    ]);
    const l40 = await planned(d.provider, { vmName: 'p', gpu: { model: 'L40S', count: 1 }, k8s: false, regions: ['eu-north1'] });
    expect(l40).toHaveLength(1); // gpu-l40s-a sits on the second platform page
    expect(await planned(d.provider, { vmName: 'p', k8s: false, maxPricePerHour: 0.2, regions: ['eu-north1'] })).toHaveLength(1);
    expect(await whyNothing(d.provider, { vmName: 'p', gpu: { model: 'B300', count: 1 }, k8s: false })).toBe('no B300 here; GPUs here: L40S, H100, H200');
  });

  it('plans without prices when the calculator fails', async () => {
    d.server.arm('CalculatorService.EstimateBatch', 'unavailable');
    const offers = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 8 }, k8s: false, regions: ['eu-north1'] });
    expect(offers[0]?.pricePerHour).toBeUndefined();
    // Unpriced offers are never planned under a price cap.
    d.server.arm('CalculatorService.EstimateBatch', 'unavailable');
    expect(await whyNothing(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 8 }, k8s: false, regions: ['eu-north1'], maxPricePerHour: 100 })).toMatch(
      /no known price/,
    );
  });

  it('creates with labels, cloud-init keys, the prepared boot disk; a failed Operation is classified; cleanup deletes the disk', async () => {
    const [offer] = await planned(d.provider, { vmName: 'v', gpu: { model: 'H100', count: 1 }, k8s: false, regions: ['eu-north1'] });
    const spec = specFor('nb-Vendor.1', { bootScript: { script: 'echo hi', env: { A: '1' } } });
    const prepared = await d.provider.prepare(offer!, spec);
    d.server.arm('InstanceService.Create', 'capacityOp');
    await expect(d.provider.create(offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Capacity' });
    const id = await d.provider.create(offer!, prepared, spec);
    const inst = d.server.instances().find((i) => i.metadata.id === id)!;
    expect(inst.metadata.labels).toEqual({ 'gpuprov-vm-name': 'nb-vendor_1', 'gpuprov-owner': 'conformance' });
    const ci = (inst.spec as { cloud_init_user_data: string }).cloud_init_user_data;
    expect(ci.startsWith('#cloud-config')).toBe(true);
    expect(ci).toContain(spec.publicKeys[0]);
    expect(ci).toContain('write_files');
    const at = { cloud: 'nebius', region: 'eu-north1' };
    await expect(d.provider.cleanup(at, spec.vmName)).rejects.toMatchObject({ kind: 'Transient' }); // disk still attached
    await d.provider.delete(at, spec.vmName, []);
    d.server.tick();
    expect(await d.provider.observe(at, spec.vmName)).toEqual([]);
    await d.provider.cleanup(at, spec.vmName);
    expect(d.server.disks().filter((x) => x.metadata.labels['gpuprov-vm-name'] === 'nb-vendor_1')).toEqual([]);
  });

  it("sideInventory lists this deployment's boot disks across pages; not another's, not one deleting, not a renamed copy", async () => {
    const [offer] = await planned(d.provider, { vmName: 'v', gpu: { model: 'H100', count: 1 }, k8s: false, regions: ['eu-north1'] });
    const at = { cloud: 'nebius', region: 'eu-north1' };
    const names = ['sd-a', 'sd-b', 'sd-c', 'sd-d', 'sd-e'];
    for (const n of names) await d.provider.prepare(offer!, specFor(n));
    await d.twin('other').prepare(offer!, specFor('sd-a'));
    const disk = (vm: string): ReturnType<typeof d.server.disks>[number] =>
      d.server.disks().find((x) => x.metadata.labels['gpuprov-vm-name'] === vm && x.metadata.labels['gpuprov-owner'] === 'conformance')!;
    disk('sd-d').state = 'DELETING';
    disk('sd-e').metadata.name = 'copy-of-sd-e';
    const calls = d.server.log.length;
    const side = (await d.provider.sideInventory(at)).filter((r) => r.vmName.startsWith('sd-'));
    expect(side.map((r) => `${r.vmName}/${r.kind}`).sort()).toEqual(['sd-a/boot-disk', 'sd-b/boot-disk', 'sd-c/boot-disk']);
    expect(side.find((r) => r.vmName === 'sd-a')?.id).toBe(disk('sd-a').metadata.id);
    expect(d.server.log.slice(calls).every((rpc) => rpc === 'DiskService.List')).toBe(true);
    expect((await d.twin('other').sideInventory(at)).filter((r) => r.vmName.startsWith('sd-')).map((r) => r.vmName)).toEqual(['sd-a']);
    for (const n of names) await d.provider.cleanup(at, n);
    await d.twin('other').cleanup(at, 'sd-a');
  });

  it('a wrong token is Credentials, and the token never shows in the error', async () => {
    const p = new NebiusProvider({ token: 'wrong-secret-token', projects: { ...PROJECTS }, endpoint: d.server.endpoint, insecure: true });
    const err = await p.observe({ cloud: 'nebius', region: 'eu-north1' }, 'x').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'Credentials' });
    expect(JSON.stringify({ m: (err as Error).message, s: (err as Error).stack })).not.toContain('wrong-secret-token');
  });

  it('fromEnv needs a token and a project; the constructor names the variable', () => {
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ NEBIUS_IAM_TOKEN: 't' })).toBeUndefined();
    expect(fromEnv({ NEBIUS_IAM_TOKEN: 't', NEBIUS_PROJECT_ID: 'project-e00abc' })?.name).toBe('nebius');
    expect(() => new NebiusProvider({ projects: { a: 'b' } })).toThrow(/NEBIUS_IAM_TOKEN/);
  });
});

describe('nebius: spot (preemptible VMs)', () => {
  let d: NebiusDouble;
  beforeAll(async () => {
    d = await startNebiusDouble();
  });
  afterAll(async () => d.close());
  const at = { cloud: 'nebius', region: 'eu-north1' };
  const h100 = { vmName: 's', gpu: { model: 'H100', count: 1 }, k8s: false, regions: ['eu-north1'] };

  it('with spot asked, lists a spot offer per preset of a platform that allows preemptible VMs: the spot price, on-demand beside', async () => {
    const offers = await planned(d.provider, { ...h100, spot: 'auto' });
    expect(offers.map((o) => `${o.market ?? 'on-demand'}/${o.pricePerHour}/${o.onDemandPricePerHour}/${o.priceSource}`)).toEqual([
      'spot/1.25/2.95/api',
      'on-demand/2.95/undefined/api',
    ]);
    expect(offers[0]!.pricedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await planned(d.provider, { ...h100, spot: 'only' })).toHaveLength(1);
    // gpu-l40s-a does not allow preemptible VMs: no spot offer.
    expect(await whyNothing(d.provider, { ...h100, gpu: { model: 'L40S', count: 1 }, spot: 'only' })).toMatch(/no spot offer/);
  });

  it('without spot, plans exactly as before: no spot offer, one calculator call per region', async () => {
    const calls = d.server.log.length;
    const all = await d.provider.plan({ vmName: 'p', k8s: false });
    expect(all.filter((o) => o.market === 'spot')).toEqual([]);
    expect(d.server.log.slice(calls).filter((rpc) => rpc === 'CalculatorService.EstimateBatch')).toHaveLength(2);
  });

  it('a failed spot estimate leaves the spot offers unpriced, saying why; the on-demand ones keep their price', () => {
    const base = { cloud: 'nebius', region: 'eu-north1', instanceType: 'gpu-h100-sxm:1gpu-16vcpu-200gb' };
    const offers = priceAndOrder(
      [base, { ...base, market: 'spot' as const }],
      '2026-12-04T00:00:00.000Z',
      { prices: new Map([[base.instanceType, 2.95]]) },
      { prices: new Map(), error: 'Transient: connection reset' },
    );
    expect(offers).toEqual([
      { ...base, pricePerHour: 2.95, priceSource: 'api', pricedAt: '2026-12-04T00:00:00.000Z' },
      { ...base, market: 'spot', extra: { priceError: 'Transient: connection reset' } },
    ]);
  });

  it('creates a spot offer as a preemptible VM that takes the spot price; an on-demand one stays regular', async () => {
    const [spot] = await planned(d.provider, { ...h100, spot: 'only' });
    const [onDemand] = await planned(d.provider, h100);
    const specOf = async (offer: typeof spot, vm: string): Promise<Record<string, unknown>> => {
      const spec = specFor(vm);
      const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
      return d.server.instances().find((i) => i.metadata.id === id)!.spec;
    };
    const s = await specOf(spot, 'spot-create');
    expect(s.preemptible).toMatchObject({ on_preemption: 'STOP' });
    expect(s.follows_spot_price).toEqual({});
    expect(s.recovery_policy).toBe('FAIL');
    const r = await specOf(onDemand, 'regular-create');
    expect(r.preemptible).toBeNull();
    expect(r.follows_spot_price ?? null).toBeNull();
    expect(r.recovery_policy).toBe('RECOVER');
    for (const vm of ['spot-create', 'regular-create']) {
      await d.provider.delete(at, vm, []);
      d.server.tick();
      await d.provider.cleanup(at, vm);
    }
  });

  it("no spot capacity is Capacity for the spot offer only (its key carries /spot, the on-demand offer's does not)", async () => {
    const [spot] = await planned(d.provider, { ...h100, spot: 'only' });
    const spec = specFor('spot-capacity');
    const prepared = await d.provider.prepare(spot!, spec);
    d.server.arm('InstanceService.Create', 'capacity');
    const err = await d.provider.create(spot!, prepared, spec).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'Capacity', code: 'RESOURCE_EXHAUSTED/NotEnoughResources' });
    expect((err as ProviderError).block).toBeUndefined(); // Capacity's default scope: the offer
    expect(offerKey(spot!)).toBe('nebius/eu-north1/-/gpu-h100-sxm:1gpu-16vcpu-200gb/spot');
    await d.provider.cleanup(at, 'spot-capacity');
  });

  it('observe and inventory report a preemptible VM Compute stopped as preempted; a regular or user-stopped one is not', async () => {
    const [spot] = await planned(d.provider, { ...h100, spot: 'only' });
    const spec = specFor('spot-reclaimed');
    const id = await d.provider.create(spot!, await d.provider.prepare(spot!, spec), spec);
    for (let i = 0; i < 3; i++) await d.provider.observe(at, spec.vmName);
    const [running] = await d.provider.observe(at, spec.vmName);
    expect(running).toMatchObject({ status: 'Running' });
    expect(running!.preemption).toBeUndefined();
    d.server.preempt(id);
    const [seen] = await d.provider.observe(at, spec.vmName);
    expect(seen).toMatchObject({ id, status: 'Stopped', reason: 'STOPPED', preemption: { detail: 'STOPPED (preemptible, stopped by Compute)' } });
    expect(Date.parse(seen!.preemption!.noticeAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(seen!.preemption!.deadline).toBeUndefined();
    expect(seen!.endpoint).toBeUndefined();
    const owned = (await d.provider.inventory(at)).find((o) => o.id === id);
    expect(owned).toMatchObject({ vmName: 'spot-reclaimed', status: 'Stopped', preemption: { detail: 'STOPPED (preemptible, stopped by Compute)' } });
    // Asked to stop (spec.stopped): a person's stop, not a reclaim.
    d.server.instances().find((i) => i.metadata.id === id)!.spec.stopped = true;
    expect((await d.provider.observe(at, spec.vmName))[0]!.preemption).toBeUndefined();
    await d.provider.delete(at, spec.vmName, [id]);
    d.server.tick();
    await d.provider.cleanup(at, spec.vmName);
  });

  it('a regular VM that stopped is not preempted', () => {
    const o = toObserved(
      {
        metadata: { id: 'i2', parent_id: 'p', name: 'n', labels: {} },
        spec: { resources: null, preemptible: null, stopped: false },
        status: { state: 'STOPPED', reconciling: false },
      },
      'eu-north1',
      '2026-12-04T00:00:00.000Z',
    );
    expect(o).toMatchObject({ status: 'Stopped' });
    expect(o.preemption).toBeUndefined();
  });
});
