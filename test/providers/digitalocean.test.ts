import { ownedName } from '../../src/providers/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorKind, ProviderError } from '../../src/core/errors';
import { DigitalOceanProvider, fromEnv } from '../../src/providers/digitalocean';
import { classify } from '../../src/providers/digitalocean/errors';
import { runConformance, specFor } from './conformance';
import { ERROR_BODIES, type DoErrorKind } from '../fixtures/digitalocean/server';
import { RateLimitHttpError as DoHttpError } from './double';
import { startDigitalOceanDouble, type DigitalOceanDouble } from './digitalocean/double';
import { planned, whyNothing } from './planned';

runConformance({
  name: 'digitalocean',
  make: async () => {
    const d = await startDigitalOceanDouble({ perPage: 2 });
    return { ...d, nativeIdempotency: false, maxPolls: 10 };
  },
});

describe('digitalocean error classification (documented bodies)', () => {
  const cases: [DoErrorKind, 'create' | undefined, ErrorKind, number | undefined][] = [
    ['capacity', 'create', 'Capacity', undefined],
    ['quota', 'create', 'Quota', undefined],
    ['unavailable', 'create', 'Unavailable', undefined],
    ['credentials', undefined, 'Credentials', undefined],
    ['rate-limit', undefined, 'Transient', 12_000],
    ['rate-limit-no-retry-after', undefined, 'Transient', undefined],
    ['server-error', undefined, 'Transient', undefined],
  ];
  it.each(cases)('%s (op %s) → %s', (name, op, kind, retry) => {
    const r = ERROR_BODIES[name];
    const e = classify(new DoHttpError('op', r.status, r.body, r.headers?.['retry-after'] ? { retryAfter: r.headers['retry-after'] } : {}), op);
    expect(e.kind).toBe(kind);
    expect(e.retryAfterMs).toBe(retry);
  });
  it('a 422 outside create is InvalidRequest; 403 is Credentials; ratelimit-reset sets the back-off', () => {
    expect(classify(new DoHttpError('op', 422, { id: 'unprocessable_entity', message: 'bad' })).kind).toBe('InvalidRequest');
    expect(classify(new DoHttpError('op', 403, { id: 'forbidden', message: 'You do not have access for the attempted action.' })).kind).toBe('Credentials');
    const now = Date.now();
    const e = classify(new DoHttpError('op', 429, ERROR_BODIES['rate-limit'].body, { ratelimitReset: String(Math.ceil(now / 1000) + 30) }));
    expect(e.retryAfterMs).toBeGreaterThan(25_000);
  });
  it('the droplet limit blocks the whole cloud', () => {
    expect(classify(new DoHttpError('op', 422, ERROR_BODIES.quota.body), 'create').block).toBe('cloud');
  });
});

describe('digitalocean specifics', () => {
  let d: DigitalOceanDouble;
  beforeAll(async () => {
    d = await startDigitalOceanDouble({ perPage: 2 });
  });
  afterAll(async () => d.close());

  it('fromEnv needs DIGITALOCEAN_TOKEN; explicit construction without it names the variable', () => {
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ DIGITALOCEAN_ACCESS_TOKEN: 't' })).toBeInstanceOf(DigitalOceanProvider);
    expect(() => new DigitalOceanProvider({})).toThrow(/DIGITALOCEAN_TOKEN/);
  });

  it('plan follows links.pages.next on our own base URL and maps sizes × regions with hourly USD prices', async () => {
    const offers = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    expect(offers.map((o) => `${o.region}/${o.instanceType}/${o.pricePerHour}`)).toEqual(['tor1/gpu-h100x1-80gb/3.39', 'nyc2/gpu-h100x1-80gb/3.39']);
    expect(offers[0]!.extra).toEqual({ image: 'gpu-h100x1-base' });
    expect(d.server.http.log.filter((l) => l.path === '/v2/sizes').length).toBe(3);
    const amd = await planned(d.provider, { vmName: 'p', gpu: { model: 'MI300X', count: 1 }, k8s: false });
    expect(amd[0]!.extra).toEqual({ image: 'gpu-amd-base' });
    // Sold out (available: false) and unknown models plan to nothing, with the reason.
    expect(await planned(d.provider, { vmName: 'p', gpu: { model: 'L40S', count: 1 }, k8s: false })).toEqual([]);
    expect(await whyNothing(d.provider, { vmName: 'p', gpu: { model: 'B200', count: 1 }, k8s: false })).toMatch(/no B200 here; GPUs here: .*nvidia_h100/);
    // VRAM is listed per droplet: per GPU it is 80 GB on the 8-GPU size too.
    const atLeast = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100-80GB', count: 1, atLeast: true }, k8s: false });
    expect(atLeast.map((o) => `${o.instanceType}/${o.gpu?.memoryGiB}`)).toEqual(['gpu-h100x1-80gb/80', 'gpu-h100x1-80gb/80', 'gpu-h100x8-640gb/80']);
  });

  it('prepare registers the key once; a clash with the same key is success', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const spec = specFor('do-prep');
    const a = await d.provider.prepare(offer!, spec);
    expect(await d.provider.prepare(offer!, spec)).toEqual(a);
    expect(d.server.keys).toHaveLength(1);
    expect(d.server.keys[0]!.name).toMatch(/^gpuprov-[0-9a-f]{12}$/);
    expect(a).toEqual({ sshKeys: [d.server.keys[0]!.fingerprint], firewallId: expect.any(String) });
    expect(d.server.firewalls.size).toBe(1);
    // The key list is empty on this answer (eventual consistency): the POST clash still succeeds.
    d.server.http.arm({ method: 'GET', pattern: '/v2/account/keys', status: 200, body: { ssh_keys: [], links: {} } });
    expect(await d.provider.prepare(offer!, spec)).toEqual(a);
  });

  it('GPU droplets are found via type=gpus; tags use key:value; user_data is cloud-init', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const spec = specFor('do-gpu');
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const drop = d.server.droplets.get(Number(id))!;
    expect(drop.tags).toEqual(['gpuprov-vm-name:do-gpu', 'gpuprov-owner:conformance', ownedName('do-gpu', 'conformance')]);
    expect(drop.name).toBe('gpuprov-do-gpu');
    expect(drop.userData.startsWith('#cloud-config')).toBe(true);
    const at = { cloud: 'digitalocean', region: offer!.region };
    const first = await d.provider.observe(at, 'do-gpu');
    expect(first).toEqual([expect.objectContaining({ id, status: 'Pending' })]);
    expect(d.server.listQueries.some((q) => q.get('type') === 'gpus')).toBe(true);
    const second = await d.provider.observe(at, 'do-gpu');
    expect(second[0]).toMatchObject({ status: 'Running', endpoint: { host: expect.stringMatching(/^203\.0\.113\./), port: 22, user: 'root' } });
    expect(await d.provider.observe({ cloud: 'digitalocean', region: 'nyc3' }, 'do-gpu')).toEqual([]);
    await d.provider.delete(at, 'do-gpu', [id]);
  });

  it('observe pages through droplet lists', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const at = { cloud: 'digitalocean', region: offer!.region };
    for (const n of ['pa', 'pb', 'pc', 'pd']) {
      const s = specFor(n);
      await d.provider.create(offer!, await d.provider.prepare(offer!, s), s);
    }
    const s = specFor('pd');
    await d.provider.create(offer!, await d.provider.prepare(offer!, s), s);
    expect(await d.provider.observe(at, 'pd')).toHaveLength(2);
    expect(d.server.listQueries.some((q) => q.get('page') === '3')).toBe(true);
    for (const n of ['pa', 'pb', 'pc', 'pd']) await d.provider.delete(at, n, []);
    await d.provider.observe(at, 'pa');
    expect(d.server.liveCount()).toBe(0);
  });

  it('delete: "a destroy is already in progress" and 404 are success', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const spec = specFor('do-twice');
    const at = { cloud: 'digitalocean', region: offer!.region };
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    d.server.droplets.get(Number(id))!.destroying = true;
    d.server.http.arm({ method: 'GET', pattern: '/v2/droplets', status: 200, body: { droplets: [], links: {} } });
    d.server.http.arm({ method: 'GET', pattern: '/v2/droplets', status: 200, body: { droplets: [], links: {} } });
    await d.provider.delete(at, spec.vmName, [id]);
    await d.provider.delete(at, spec.vmName, [id]);
  });

  it('bad token → Credentials, and the token never appears in the error', async () => {
    const p = new DigitalOceanProvider({ token: 'dop_v1_sekret123', baseUrl: d.server.url });
    const err = (await planned(p, { vmName: 'p', k8s: false }).catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('Credentials');
    expect(`${err.message} ${JSON.stringify(err)} ${String(err.stack)}`).not.toContain('sekret123');
  });
});
