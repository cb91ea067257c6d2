import { ownedName } from '../../src/providers/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, type ErrorKind } from '../../src/core/errors';
import { VastProvider, fromEnv } from '../../src/providers/vastai';
import { classify } from '../../src/providers/vastai/errors';
import { STATUS, regionOf, searchQuery, sshEndpoint, toObserved, vastGpuNames } from '../../src/providers/vastai/map';
import { API_KEY, BODIES } from '../fixtures/vastai/server';
import { priceOf } from '../fixtures/vastai/market';
import { locationOf, runConformance, specFor, type ConformanceEnv } from './conformance';
import { StatusFirstHttpError as VastHttpError } from './double';
import { startVastaiDouble, type VastDouble } from './vastai/double';
import { planned } from './planned';

const request = { vmName: 'x', gpu: { model: 'RTX4090', count: 1 }, k8s: false };

runConformance({
  name: 'vastai',
  make: async (): Promise<ConformanceEnv> => ({
    ...(await startVastaiDouble()),
    request,
    nativeIdempotency: false,
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Credentials', primitive: 'plan' },
      { kind: 'Transient', primitive: 'observe' },
      { kind: 'InvalidRequest', primitive: 'create' },
    ],
  }),
});

describe('vastai: classify documented error bodies', () => {
  const cases: {
    name: string;
    status: number;
    body: unknown;
    op?: string;
    retryAfter?: string;
    kind: ErrorKind;
    block?: string;
    retryAfterMs?: number;
    code?: string;
  }[] = [
    { name: '404 no_such_ask on create', status: 404, body: BODIES.noSuchAsk404, op: 'create', kind: 'Capacity', block: 'offer', code: 'no_such_ask' },
    {
      name: '404 with the code only inside msg',
      status: 404,
      body: BODIES.noSuchAskMsgOnly,
      op: 'create',
      kind: 'Capacity',
      block: 'offer',
      code: 'no_such_ask',
    },
    { name: '410 no_such_ask (cancel_unavail)', status: 410, body: BODIES.noSuchAsk410, op: 'create', kind: 'Capacity', block: 'offer' },
    { name: 'invalid_args', status: 400, body: BODIES.invalidArgs, kind: 'InvalidRequest' },
    { name: 'invalid_price (a spot bid below the minimum)', status: 400, body: BODIES.invalidPrice, kind: 'Capacity', block: 'offer' },
    { name: 'no_ssh_key_for_vm', status: 400, body: BODIES.noSshKeyForVm, kind: 'InvalidRequest' },
    { name: 'insufficient credit blocks the cloud', status: 400, body: BODIES.credit, kind: 'Quota', block: 'cloud' },
    { name: '401', status: 401, body: BODIES.unauthorized, kind: 'Credentials' },
    { name: '403 plain text', status: 403, body: 'forbidden', kind: 'Credentials' },
    { name: '429 plain text without Retry-After', status: 429, body: BODIES.rate, kind: 'Transient' },
    { name: '429 with Retry-After', status: 429, body: BODIES.rate, retryAfter: '3', kind: 'Transient', retryAfterMs: 3000 },
    { name: '500', status: 500, body: BODIES.internal, kind: 'Transient' },
    { name: '200 with success:false and no code', status: 200, body: { success: false, msg: 'something odd' }, kind: 'InvalidRequest' },
  ];
  it.each(cases)('$name → $kind', (c) => {
    const e = classify(new VastHttpError(c.status, c.body, c.op ?? 'list', c.retryAfter));
    expect(e.kind).toBe(c.kind);
    expect(e.block).toBe(c.block);
    expect(e.retryAfterMs).toBe(c.retryAfterMs);
    if (c.code) expect(e.code).toBe(c.code);
  });
});

describe('vastai: mapping', () => {
  const at = { cloud: 'vastai', region: 'US' };
  it('status table follows actual_status', () => {
    expect(STATUS).toMatchObject({ '': 'Pending', loading: 'Pending', running: 'Running', stopped: 'Stopped', exited: 'Failed' });
  });
  it('dstack hard failures: OCI error while created; stopped by the host', () => {
    expect(toObserved({ id: 1, actual_status: 'created', status_msg: 'Error response from daemon: OCI runtime create failed: x' }, at)?.status).toBe('Failed');
    expect(toObserved({ id: 1, actual_status: 'stopped', intended_status: 'stopped' }, at)?.status).toBe('Failed');
    expect(toObserved({ id: 1, actual_status: null }, at)?.status).toBe('Pending');
  });
  it('endpoint: direct when 22/tcp is published, else the proxy', () => {
    expect(
      sshEndpoint({
        id: 1,
        public_ipaddr: '1.2.3.4\n',
        ports: { '22/tcp': [{ HostIp: '0.0.0.0', HostPort: 41234 }] },
        ssh_host: 'ssh5.vast.ai',
        ssh_port: 12345,
      }),
    ).toEqual({ host: '1.2.3.4', port: 41234, user: 'root' });
    expect(sshEndpoint({ id: 1, public_ipaddr: '1.2.3.4', ssh_host: 'ssh5.vast.ai', ssh_port: 12345 })).toEqual({
      host: 'ssh5.vast.ai',
      port: 12345,
      user: 'root',
    });
    expect(regionOf('Texas, US')).toBe('US');
  });
});

describe('vastai: vendor specifics against the fixture', () => {
  let d: VastDouble;
  beforeAll(async () => {
    d = await startVastaiDouble();
  });
  afterAll(async () => {
    await d.close();
  });

  it('plans asks cheapest first, one zone per machine, country as region; prices include the 50 GB disk', async () => {
    const offers = await planned(d.provider, request);
    const price = (id: number): number =>
      priceOf(
        d.server.asks.find((a) => a.id === id)!,
        50,
      );
    expect(offers.slice(0, 3).map((o) => [o.region, o.zone, o.pricePerHour])).toEqual([
      ['CA', 'm802', price(4202)],
      ['PL', 'm803', price(4203)],
      ['US', 'm801', price(4201)],
    ]);
    expect(price(4202)).toBeGreaterThan(0.355);
    expect(offers[0]).toMatchObject({ instanceType: '1x RTX 4090', currency: 'USD', extra: { askId: 4202, direct: false } });
    expect(offers.every((o) => o.instanceType === '1x RTX 4090')).toBe(true);
    expect(await planned(d.provider, { ...request, gpu: { model: 'A100-40GB', count: 1 }, regions: ['SE'] })).toMatchObject([
      { instanceType: '1x A100 PCIE', zone: 'm805' },
    ]);
  });

  it('the search filters server-side: model, count (exact or N+), price cap, reliability, disk, countries', () => {
    const q = searchQuery({ vmName: 'x', gpu: { model: 'A100', count: 2, atLeast: true }, maxPricePerHour: 3, regions: ['US', 'CA'], k8s: false }, 50);
    expect(q).toMatchObject({
      gpu_name: { in: ['A100 PCIE', 'A100 SXM4'] },
      num_gpus: { gte: 2 },
      dph_total: { lte: 3 },
      reliability: { gte: 0.95 },
      disk_space: { gte: 50 },
      geolocation: { in: ['US', 'CA'] },
      type: 'on-demand',
      allocated_storage: 50,
      verified: { eq: true },
      rentable: { eq: true },
      rented: { eq: false },
    });
    expect(searchQuery({ vmName: 'x', gpu: { model: 'H100-SXM', count: 1 }, k8s: false }, 50)).toMatchObject({
      gpu_name: { in: ['H100 SXM'] },
      num_gpus: { eq: 1 },
    });
    expect(vastGpuNames('RTX4090')).toEqual(['RTX 4090']);
    expect(vastGpuNames('A6000')).toEqual(['RTX A6000']);
    expect(vastGpuNames('H100')).toEqual(['H100 NVL', 'H100 PCIE', 'H100 SXM']);
    expect(vastGpuNames('T4')).toEqual(['Tesla T4']);
    expect(vastGpuNames('RTX 5000')).toEqual(['RTX 5000']);
  });

  it('an A100 request finds the A100s in a market of hundreds of cheaper consumer GPUs', async () => {
    const consumer = d.server.asks.filter((a) => /^RTX (3090|4090)$/.test(a.gpu_name)).length;
    const a100 = d.server.asks.filter((a) => a.gpu_name.startsWith('A100'));
    expect(d.server.asks.length).toBeGreaterThan(300);
    expect(consumer / d.server.asks.length).toBeGreaterThan(0.8);
    const offers = await planned(d.provider, { vmName: 'x', gpu: { model: 'A100', count: 1 }, k8s: false });
    const rentable = a100.filter((a) => a.num_gpus === 1 && a.verified && !a.rented && a.reliability >= 0.95 && a.disk_space >= 50);
    expect(rentable.length).toBeGreaterThan(0);
    expect(offers.map((o) => (o.extra as { askId: number }).askId).sort()).toEqual(rentable.map((a) => a.id).sort());
    expect(offers.every((o) => o.gpu?.model.startsWith('A100') && o.gpu.count === 1)).toBe(true);
    const eight = await planned(d.provider, { vmName: 'x', gpu: { model: 'H100', count: 2, atLeast: true }, maxPricePerHour: 30, k8s: false });
    expect(eight.length).toBeGreaterThan(0);
    expect(eight.every((o) => o.gpu?.model.startsWith('H100') && o.gpu.count >= 2 && o.pricePerHour! <= 30)).toBe(true);
  });

  it("create labels the identity, sends the users' keys and the boot script via onstart; direct ssh when the ask has ports", async () => {
    const offers = await planned(d.provider, request);
    const direct = offers.find((o) => o.region === 'US')!;
    const spec = specFor('va-direct', {
      publicKeys: ['ssh-ed25519 AAAAworkerVast w', 'ssh-ed25519 AAAAuserVast u'],
      bootScript: { script: '#!/bin/sh\necho booted', env: { X: 'y' } },
    });
    const id = await d.provider.create(direct, await d.provider.prepare(direct, spec), spec);
    const body = d.server.instances.get(Number(id))!.body;
    expect(body).toMatchObject({
      label: ownedName('va-direct', 'conformance'),
      runtype: 'ssh_direc ssh_proxy',
      cancel_unavail: true,
      client_id: 'me',
      disk: 50,
    });
    expect(body.env).toEqual({ '-p 22:22': '1', GPUPROV_VM_NAME: 'va-direct', GPUPROV_OWNER: expect.any(String) as unknown });
    expect(body.onstart).toMatch(/^#!\/bin\/bash\n/);
    expect(body.onstart).toContain("export X='y'");
    expect(body.onstart).toContain("'ssh-ed25519 AAAAuserVast u'");
    expect(body.onstart).not.toContain('AAAAworkerVast');
    expect(body.onstart).toContain('echo booted');
    expect(d.server.sshKeys.some((k) => k.key.includes('AAAAworkerVast'))).toBe(true);
    const at = locationOf(direct);
    let obs = await d.provider.observe(at, 'va-direct');
    for (let i = 0; i < 3 && obs[0]?.status !== 'Running'; i++) obs = await d.provider.observe(at, 'va-direct');
    expect(obs[0]).toMatchObject({ id, status: 'Running', endpoint: { host: '198.51.100.20', user: 'root' } });
    expect(obs[0]!.endpoint!.port).toBeGreaterThanOrEqual(40000);
    expect(d.server.lastFilters).toEqual({ label: { eq: ownedName('va-direct', 'conformance') } });
    await d.provider.delete(at, 'va-direct', [id]);
    expect(d.server.instances.has(Number(id))).toBe(false);
  });

  it('proxy ssh when the ask has no direct ports', async () => {
    const proxy = (await planned(d.provider, request)).find((o) => o.region === 'CA')!;
    const spec = specFor('va-proxy');
    const id = await d.provider.create(proxy, await d.provider.prepare(proxy, spec), spec);
    const at = locationOf(proxy);
    let obs = await d.provider.observe(at, 'va-proxy');
    for (let i = 0; i < 3 && obs[0]?.status !== 'Running'; i++) obs = await d.provider.observe(at, 'va-proxy');
    expect(obs[0]?.endpoint).toEqual({ host: expect.stringMatching(/^ssh\d\.vast\.ai$/), port: 10000 + (Number(id) % 1000), user: 'root' });
    await d.provider.delete(at, 'va-proxy', []);
  });

  it('a create that errors yet creates: observe finds it by label and delete by label removes it', async () => {
    const offer = (await planned(d.provider, request))[0]!;
    const spec = specFor('va-ambiguous');
    const at = locationOf(offer);
    const live0 = await d.countLive();
    d.server.armCreateErrorYetCreates();
    const err = await d.provider.create(offer, await d.provider.prepare(offer, spec), spec).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe('Transient');
    expect(await d.countLive()).toBe(live0 + 1);
    const seen = await d.provider.observe(at, 'va-ambiguous');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.status).toBe('Failed');
    await d.provider.delete(at, 'va-ambiguous', []);
    expect(await d.countLive()).toBe(live0);
    expect(await d.provider.observe(at, 'va-ambiguous')).toEqual([]);
  });

  it('observe follows next_token pages', async () => {
    const offer = (await planned(d.provider, request))[0]!;
    const spec = specFor('va-pages');
    for (let i = 0; i < 3; i++) await d.provider.create(offer, await d.provider.prepare(offer, spec), spec);
    d.server.pageSize = 1;
    const at = locationOf(offer);
    expect(await d.provider.observe(at, 'va-pages')).toHaveLength(3);
    await d.provider.delete(at, 'va-pages', []);
    expect(await d.provider.observe(at, 'va-pages')).toEqual([]);
    d.server.pageSize = 25;
  });

  it('429 without Retry-After is Transient with no hint; with it, the hint; wrong key is Credentials, never echoed', async () => {
    d.server.arm('list', 'rate-limit-no-header');
    const e1 = (await d.provider.observe({ cloud: 'vastai', region: 'US' }, 'x').catch((x: unknown) => x)) as ProviderError;
    expect([e1.kind, e1.retryAfterMs]).toEqual(['Transient', undefined]);
    d.server.arm('list', 'rate-limit');
    await expect(d.provider.observe({ cloud: 'vastai', region: 'US' }, 'x')).rejects.toMatchObject({ kind: 'Transient', retryAfterMs: 3000 });
    const bad = new VastProvider({ apiKey: 'vast_WRONG_SECRET', baseUrl: d.server.url });
    const e = (await planned(bad, request).catch((x: unknown) => x)) as ProviderError;
    expect(e.kind).toBe('Credentials');
    expect(`${e.message} ${e.stack}`).not.toContain('vast_WRONG_SECRET');
    expect(`${e.message} ${e.stack}`).not.toContain(API_KEY);
  });

  it('capabilities: containers, no k3s, provider-chosen user; fromEnv needs VAST_API_KEY', () => {
    expect(d.provider.capabilities()).toMatchObject({ k8s: false, sshUser: { kind: 'provider' } });
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ VAST_API_KEY: 'k' })).toBeInstanceOf(VastProvider);
    return expect(fromEnv({ VAST_API_KEY: API_KEY, VAST_API_URL: d.server.url })!.plan(request)).resolves.not.toHaveLength(0);
    expect(() => new VastProvider({})).toThrow(/VAST_API_KEY/);
  });
});
