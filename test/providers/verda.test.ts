import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorKind, ProviderError } from '../../src/core/errors';
import { fromEnv, VerdaProvider } from '../../src/providers/verda';
import { HttpError as VerdaHttpError } from '../../src/providers/http';
import { classify } from '../../src/providers/verda/errors';
import { runConformance, specFor } from './conformance';
import { ERROR_BODIES, type VerdaErrorKind } from '../fixtures/verda/server';
import { startVerdaDouble, type VerdaDouble } from './verda/double';
import { planned, whyNothing } from './planned';
import { offerKey } from '../../src/core/offers';

runConformance({
  name: 'verda',
  make: async () => {
    const d = await startVerdaDouble();
    return { ...d, nativeIdempotency: false, maxPolls: 10 };
  },
});

describe('verda error classification (documented bodies)', () => {
  const cases: [VerdaErrorKind, 'create' | undefined, ErrorKind, number | undefined][] = [
    ['capacity', 'create', 'Capacity', undefined],
    ['capacity', undefined, 'InvalidRequest', undefined],
    ['quota', 'create', 'Quota', undefined],
    ['credentials', undefined, 'Credentials', undefined],
    ['forbidden', undefined, 'Credentials', undefined],
    ['rate-limit', undefined, 'Transient', 3000],
    ['rate-limit-no-retry-after', undefined, 'Transient', undefined],
    ['server-error', undefined, 'Transient', undefined],
    ['service-unavailable', undefined, 'Transient', undefined],
    ['delete-provisioning', undefined, 'Transient', undefined],
  ];
  it.each(cases)('%s (op %s) → %s', (name, op, kind, retry) => {
    const r = ERROR_BODIES[name];
    const e = classify(new VerdaHttpError('op', r.status, r.body, r.headers?.['retry-after']), op);
    expect(e.kind).toBe(kind);
    expect(e.retryAfterMs).toBe(retry);
  });
  it('invalid_request is InvalidRequest; insufficient funds blocks the cloud', () => {
    expect(classify(new VerdaHttpError('op', 400, { code: 'invalid_request', message: 'Invalid image' }), 'create').kind).toBe('InvalidRequest');
    expect(classify(new VerdaHttpError('op', 402, ERROR_BODIES.quota.body)).block).toBe('cloud');
  });
});

describe('verda specifics', () => {
  let d: VerdaDouble;
  beforeAll(async () => {
    d = await startVerdaDouble();
  });
  afterAll(async () => d.close());

  it('fromEnv needs VERDA_CLIENT_ID and VERDA_CLIENT_SECRET; explicit construction names the missing one', () => {
    expect(fromEnv({ VERDA_CLIENT_ID: 'x' })).toBeUndefined();
    expect(fromEnv({ VERDA_CLIENT_ID: 'x', VERDA_CLIENT_SECRET: 'y' })).toBeInstanceOf(VerdaProvider);
    expect(() => new VerdaProvider({ clientId: 'x' })).toThrow(/VERDA_CLIENT_SECRET/);
    expect(() => new VerdaProvider({})).toThrow(/VERDA_CLIENT_ID/);
  });

  it('plan: one offer per available location × type, string or number prices, USD', async () => {
    const offers = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    expect(offers.map((o) => `${o.region}/${o.instanceType}/${o.pricePerHour}`)).toEqual(['FIN-01/1H100.80S.30V/2.19', 'ICE-01/1H100.80S.30V/2.19']);
    const cpu = await planned(d.provider, { vmName: 'p', k8s: false });
    expect(cpu.map((o) => o.instanceType)).toEqual(['CPU.4V.16G']);
    expect(await whyNothing(d.provider, { vmName: 'p', gpu: { model: 'B200', count: 1 }, k8s: false })).toMatch(/^no B200 here; GPUs here: .*H100 SXM5 80GB/);
    // The type's name carries the form factor: H100-SXM matches "H100 SXM5 80GB".
    expect(await planned(d.provider, { vmName: 'p', gpu: { model: 'H100-SXM', count: 1 }, k8s: false })).toHaveLength(2);
  });

  it('the token is cached across calls, and an expired one is refreshed once on 401', async () => {
    const p = new VerdaProvider({ clientId: d.server.clientId, clientSecret: d.server.clientSecret, baseUrl: d.server.url });
    const before = d.server.grants.length;
    await planned(p, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    await p.observe({ cloud: 'verda', region: 'FIN-01' }, 'x');
    expect(d.server.grants.length - before).toBe(1);
    d.server.expireTokens();
    await p.observe({ cloud: 'verda', region: 'FIN-01' }, 'x');
    expect(d.server.grants.slice(before)).toEqual(['client_credentials', 'refresh_token']);
  });

  it('a second 401 after the refresh is Credentials, once (no loop), with no secret in the error', async () => {
    const p = new VerdaProvider({ clientId: d.server.clientId, clientSecret: d.server.clientSecret, baseUrl: d.server.url });
    await p.observe({ cloud: 'verda', region: 'FIN-01' }, 'x');
    d.server.armError('credentials', 'GET', '/instances');
    d.server.armError('credentials', 'GET', '/instances');
    const n = d.server.http.log.length;
    const err = (await p.observe({ cloud: 'verda', region: 'FIN-01' }, 'x').catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('Credentials');
    expect(d.server.http.log.slice(n).map((l) => `${l.method} ${l.path}`)).toEqual(['GET /instances', 'POST /oauth2/token', 'GET /instances']);
    const bad = new VerdaProvider({ clientId: 'c', clientSecret: 'very-sekret-456', baseUrl: d.server.url });
    const e2 = (await planned(bad, { vmName: 'p', k8s: false }).catch((e: unknown) => e)) as ProviderError;
    expect(e2.kind).toBe('Credentials');
    expect(`${e2.message} ${JSON.stringify(e2)} ${String(e2.stack)}`).not.toContain('very-sekret-456');
  });

  it("prepare makes the startup script (renderShellScript) and registers keys idempotently; cleanup deletes only this VM's scripts", async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const at = { cloud: 'verda', region: offer!.region };
    const boot = { script: 'echo hello', env: { K: 'v' } };
    const spec = specFor('vd-a', { bootScript: boot, publicKeys: [specFor('x').publicKeys[0]!, 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKx2 user@laptop'] });
    const other = specFor('vd-a-b', { bootScript: boot });
    const a = await d.provider.prepare(offer!, spec);
    expect(await d.provider.prepare(offer!, spec)).toEqual(a);
    await d.provider.prepare(offer!, other);
    expect(d.server.sshKeys).toHaveLength(2);
    expect(d.server.scripts.map((s) => s.name)).toEqual([
      expect.stringMatching(/^gpuprov-vd-a-[0-9a-f]{6}\.[0-9a-f]{8}$/),
      expect.stringMatching(/^gpuprov-vd-a-b-[0-9a-f]{6}\.[0-9a-f]{8}$/),
    ]);
    expect(d.server.scripts[0]!.script).toContain("export K='v'");
    const id = await d.provider.create(offer!, a, spec);
    const vm = d.server.instances.get(id)!;
    expect(vm).toMatchObject({
      hostname: 'gpuprov-vd-a',
      description: 'gpuprov-vm-name=vd-a gpuprov-owner=conformance',
      startup_script_id: d.server.scripts[0]!.id,
      location: offer!.region,
    });
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const volumes0 = d.server.volumes.size;
    expect([...d.server.volumes.values()].filter((v) => v.instance_id === id)).toMatchObject([{ id: vm.os_volume_id, is_os_volume: true, status: 'attached' }]);
    await d.provider.delete(at, 'vd-a', [id]);
    // delete_permanently with the OS volume in volume_ids: the volume goes with the instance.
    expect(d.server.volumes.size).toBe(volumes0 - 1);
    expect(d.server.volumes.has(vm.os_volume_id)).toBe(false);
    await d.provider.observe(at, 'vd-a');
    expect(d.server.volumes.size).toBe(volumes0 - 1);
    await d.provider.cleanup(at, 'vd-a');
    await d.provider.cleanup(at, 'vd-a');
    expect(d.server.scripts.map((s) => s.name)).toEqual([expect.stringMatching(/^gpuprov-vd-a-b-[0-9a-f]{6}\./)]);
    await d.provider.cleanup(at, 'vd-a-b');
    expect(d.server.scripts).toHaveLength(0);
  });

  it('observe: pending → running with ip and root; delete of a provisioning instance is Transient', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const at = { cloud: 'verda', region: offer!.region };
    const spec = specFor('vd-run');
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    d.server.rejectDeleteWhileProvisioning = true;
    const err = (await d.provider.delete(at, 'vd-run', [id]).catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('Transient');
    d.server.rejectDeleteWhileProvisioning = false;
    const o = await d.provider.observe(at, 'vd-run');
    expect(o[0]).toMatchObject({ id, status: 'Running', endpoint: { host: expect.stringMatching(/^192\.0\.2\./), port: 22, user: 'root' } });
    expect(await d.provider.observe({ cloud: 'verda', region: 'ICE-01' }, 'vd-run')).toEqual([]);
    await d.provider.delete(at, 'vd-run', [id]);
    await d.provider.delete(at, 'vd-run', [id]);
  });
});

describe('verda: spot', () => {
  let d: VerdaDouble;
  beforeAll(async () => {
    d = await startVerdaDouble();
  });
  afterAll(async () => d.close());
  const h100 = { vmName: 's', gpu: { model: 'H100', count: 1 }, k8s: false };
  const availabilityAsked = (): string[] =>
    d.server.http.requests.filter((r) => r.path === '/instance-availability').map((r) => new URLSearchParams(r.query).get('isSpot') ?? '');

  it('with spot asked, lists spot offers from the spot stock at spot_price, the on-demand price beside', async () => {
    const offers = await planned(d.provider, { ...h100, spot: 'auto' });
    expect(offers.map((o) => `${o.region}/${o.market ?? 'on-demand'}/${o.pricePerHour}/${o.onDemandPricePerHour}/${o.priceSource}`)).toEqual([
      'FIN-01/spot/0.9/2.19/api',
      'FIN-01/on-demand/2.19/undefined/api',
      'ICE-01/on-demand/2.19/undefined/api',
    ]);
    // The A100 is spot-only in FIN-01: its spot offer comes from the spot stock, not the on-demand one.
    const a100 = await planned(d.provider, { ...h100, gpu: { model: 'A100', count: 1 }, spot: 'only' });
    expect(a100.map((o) => `${o.region}/${o.market}/${o.pricePerHour}/${o.onDemandPricePerHour}`)).toEqual(['FIN-01/spot/0.5/1.29', 'ICE-01/spot/0.5/1.29']);
  });

  it('without spot, plans as before: the on-demand stock only, no spot offer', async () => {
    const before = availabilityAsked().length;
    const offers = await d.provider.plan(h100);
    expect(offers.filter((o) => o.market === 'spot')).toEqual([]);
    expect(availabilityAsked().slice(before)).toEqual(['false']);
  });

  it('creates a spot offer with is_spot: true, its OS volume going with it when reclaimed; an on-demand one with is_spot: false', async () => {
    const [spot] = await planned(d.provider, { ...h100, spot: 'only' });
    const [onDemand] = await planned(d.provider, { ...h100, regions: ['FIN-01'] });
    const bodyOf = async (offer: typeof spot, vm: string): Promise<Record<string, unknown>> => {
      const spec = specFor(vm, { diskGb: 120 });
      const n = d.server.http.requests.length;
      await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
      return d.server.http.requests.slice(n).find((r) => r.method === 'POST' && r.path === '/instances')!.body as Record<string, unknown>;
    };
    const s = await bodyOf(spot, 'vs-spot');
    expect(s).toMatchObject({
      is_spot: true,
      location_code: 'FIN-01',
      os_volume: { name: 'gpuprov-vs-spot-os', size: 120, on_spot_discontinue: 'delete_permanently' },
    });
    const r = await bodyOf(onDemand, 'vs-regular');
    expect(r).toMatchObject({ is_spot: false, os_volume: { name: 'gpuprov-vs-regular-os', size: 120 } });
    expect((r.os_volume as Record<string, unknown>).on_spot_discontinue).toBeUndefined();
    for (const vm of ['vs-spot', 'vs-regular']) await d.provider.delete({ cloud: 'verda', region: 'FIN-01' }, vm, []);
  });

  it('no spot stock is Capacity for the spot offer only (its key carries /spot)', async () => {
    const [ice] = await planned(d.provider, { ...h100, regions: ['ICE-01'] });
    const spot = { ...ice!, market: 'spot' as const };
    const spec = specFor('vs-none');
    const err = (await d.provider.create(spot, await d.provider.prepare(spot, spec), spec).catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('Capacity');
    expect(err.block).toBeUndefined(); // Capacity's default scope: the offer
    expect(offerKey(spot)).toBe('verda/ICE-01/-/1H100.80S.30V/spot');
    expect(offerKey(ice!)).toBe('verda/ICE-01/-/1H100.80S.30V');
  });

  it('inventory reports a reclaimed spot instance as preempted; observe counts it gone; its delete is a no-op', async () => {
    const [spot] = await planned(d.provider, { ...h100, spot: 'only' });
    const at = { cloud: 'verda', region: spot!.region };
    const spec = specFor('vs-reclaimed', { diskGb: 80 });
    const id = await d.provider.create(spot!, await d.provider.prepare(spot!, spec), spec);
    for (let i = 0; i < 3; i++) await d.provider.observe(at, spec.vmName);
    const running = (await d.provider.inventory(at)).find((o) => o.id === id);
    expect(running).toMatchObject({ status: 'Running' });
    expect(running!.preemption).toBeUndefined();
    const volume = d.server.instances.get(id)!.os_volume_id;
    d.server.reclaim(id);
    expect(d.server.volumes.has(volume)).toBe(false); // on_spot_discontinue: delete_permanently
    const owned = (await d.provider.inventory(at)).find((o) => o.id === id);
    expect(owned).toMatchObject({
      vmName: 'vs-reclaimed',
      status: 'Terminating',
      reason: 'discontinued',
      preemption: { detail: 'discontinued (spot instance reclaimed)' },
    });
    expect(Date.parse(owned!.preemption!.noticeAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(owned!.preemption!.deadline).toBeUndefined();
    expect(await d.provider.observe(at, spec.vmName)).toEqual([]);
    await d.provider.delete(at, spec.vmName, [id]);
    await d.provider.cleanup(at, spec.vmName);
  });
});
