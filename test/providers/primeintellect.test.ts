import { ownedName } from '../../src/providers/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorKind, ProviderError } from '../../src/core/errors';
import { PrimeIntellectProvider, fromEnv } from '../../src/providers/primeintellect';
import { classify } from '../../src/providers/primeintellect/errors';
import { STATUS, parseSshConnection, toObserved } from '../../src/providers/primeintellect/map';
import { API_KEY, BODIES } from '../fixtures/primeintellect/server';
import { runConformance, specFor, type ConformanceEnv } from './conformance';
import { StatusFirstHttpError as PrimeHttpError } from './double';
import { startPrimeIntellectDouble, type PrimeIntellectDouble } from './primeintellect/double';
import { planned, whyNothing } from './planned';

const request = { vmName: 'x', gpu: { model: 'H100', count: 1 }, k8s: false };

runConformance({
  name: 'primeintellect',
  make: async (): Promise<ConformanceEnv> => ({
    ...(await startPrimeIntellectDouble()),
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

describe('primeintellect: classify error bodies', () => {
  const cases: { name: string; status: number; body: unknown; retryAfter?: string; kind: ErrorKind; block?: string; retryAfterMs?: number }[] = [
    { name: 'capacity text', status: 400, body: BODIES.capacity, kind: 'Capacity' },
    { name: 'out of stock (message field)', status: 400, body: BODIES.outOfStock, kind: 'Capacity' },
    { name: 'pod limit exceeded → Quota for the cloud', status: 400, body: BODIES.quota, kind: 'Quota', block: 'cloud' },
    { name: '401', status: 401, body: BODIES.unauthorized, kind: 'Credentials' },
    { name: '403', status: 403, body: { error: 'Insufficient permissions: Instances → Write' }, kind: 'Credentials' },
    { name: '422 validation list', status: 422, body: BODIES.validation, kind: 'InvalidRequest' },
    { name: '429 with Retry-After', status: 429, body: BODIES.rate, retryAfter: '12', kind: 'Transient', retryAfterMs: 12_000 },
    { name: '429 without Retry-After', status: 429, body: BODIES.rate, kind: 'Transient' },
    { name: '500', status: 500, body: BODIES.internal, kind: 'Transient' },
    { name: 'unclassified 400', status: 400, body: { detail: 'image not supported by provider' }, kind: 'InvalidRequest' },
  ];
  it.each(cases)('$name → $kind', (c) => {
    const e = classify(new PrimeHttpError(c.status, c.body, 'create', c.retryAfter));
    expect(e.kind).toBe(c.kind);
    expect(e.block).toBe(c.block);
    expect(e.retryAfterMs).toBe(c.retryAfterMs);
  });
});

describe('primeintellect: mapping', () => {
  it('status table', () => {
    expect(STATUS).toMatchObject({
      PROVISIONING: 'Pending',
      PENDING: 'Pending',
      ACTIVE: 'Running',
      STOPPED: 'Stopped',
      ERROR: 'Failed',
      DELETING: 'Terminating',
      TERMINATED: null,
    });
  });
  it.each([
    ['root@1.2.3.4 -p 22', { host: '1.2.3.4', port: 22, user: 'root' }],
    ['ssh root@1.2.3.4 -p 2222', { host: '1.2.3.4', port: 2222, user: 'root' }],
    ['ubuntu@host.example:2200', { host: 'host.example', port: 2200, user: 'ubuntu' }],
    [['root@5.6.7.8 -p 10022'], { host: '5.6.7.8', port: 10022, user: 'root' }],
    [[null, 'root@5.6.7.8'], { host: '5.6.7.8', port: 22, user: 'root' }],
    ['ssh -p 2022 -l admin 9.9.9.9', { host: '9.9.9.9', port: 2022, user: 'admin' }],
    ['ssh -i ~/.ssh/id root@h -p 7', { host: 'h', port: 7, user: 'root' }],
  ] as const)('parses sshConnection %j', (input, want) => {
    expect(parseSshConnection(input as string | (string | null)[])).toEqual(want);
  });
  it.each([[null], [[null]], [''], [[]], ['root@host -p notaport']])('no endpoint from %j', (input) => {
    expect(parseSshConnection(input as string | null)).toBeUndefined();
  });
  it('a failed installation on an ACTIVE pod is Failed with the vendor reason', () => {
    const o = toObserved(
      { id: 'p', status: 'ACTIVE', installationStatus: 'ERROR', installationFailure: 'image pull failed', sshConnection: 'root@1.1.1.1 -p 22' },
      { cloud: 'primeintellect', region: 'X' },
    );
    expect(o).toMatchObject({ status: 'Failed', reason: 'image pull failed' });
    expect(o?.endpoint).toBeUndefined();
  });
});

describe('primeintellect: vendor specifics against the fixture', () => {
  let d: PrimeIntellectDouble;
  beforeAll(async () => {
    d = await startPrimeIntellectDouble();
  });
  afterAll(async () => {
    await d.close();
  });

  it('plans one offer per data centre (cheapest there), following availability pages, skipping unavailable stock', async () => {
    const offers = await planned(d.provider, request);
    expect(offers.map((o) => [o.region, o.pricePerHour])).toEqual([
      ['US-TX-1', 2.09],
      ['FIN-01', 2.19],
    ]);
    expect(offers[0]).toMatchObject({ instanceType: 'H100_80GB', currency: 'USD', extra: { cloudId: 'c3', provider: 'massedcompute', socket: 'PCIe' } });
    expect(d.server.http.log.filter((l) => l.path.endsWith('/availability/gpus')).length).toBeGreaterThan(1);
    expect(await whyNothing(d.provider, { ...request, gpu: { model: 'B200', count: 1 } })).toMatch(/^no B200 here; GPUs here: .*H100_80GB/);
    expect(offers[0]!.gpu).toEqual({ model: 'H100_80GB', count: 1, memoryGiB: 80 });
    expect((await planned(d.provider, { ...request, gpu: { model: 'A10', count: 1 } })).map((o) => o.instanceType)).toEqual(['A10_24GB']);
  });

  it('registers the worker key via the API once (keys listed across pages)', async () => {
    const [offer] = await planned(d.provider, request);
    const spec = specFor('pi-key', { publicKeys: ['ssh-ed25519 AAAAworkerPI w'] });
    const a = await d.provider.prepare(offer!, spec);
    const b = await d.provider.prepare(offer!, spec);
    expect(b).toEqual(a);
    expect(d.server.sshKeys.filter((k) => k.publicKey.includes('AAAAworkerPI'))).toHaveLength(1);
    // an existing key on the second page is found, not re-added
    expect(await d.provider.prepare(offer!, specFor('pi-key2', { publicKeys: ['ssh-ed25519 AAAAexisting3 other-comment'] }))).toEqual({ sshKeyId: 'k-3' });
  });

  it('a name clash on POST /ssh_keys with the same key is success', async () => {
    const [offer] = await planned(d.provider, request);
    const spec = specFor('pi-clash', { publicKeys: ['ssh-ed25519 AAAAclashPI c'] });
    const first = await d.provider.prepare(offer!, spec);
    // Our first listing misses the key (a concurrent registration); the POST then clashes on the name.
    d.server.http.arm({ method: 'GET', pattern: '/api/v1/ssh_keys', status: 200, body: { data: [], totalCount: 0, offset: 0, limit: 100 } });
    expect(await d.provider.prepare(offer!, spec)).toEqual(first);
    expect(d.server.sshKeys.filter((k) => k.publicKey.includes('AAAAclashPI'))).toHaveLength(1);
  });

  it('create posts the availability ids; observe gets user/host/port from sshConnection (via /pods/status while the list lags)', async () => {
    const [offer] = await planned(d.provider, request);
    const spec = specFor('pi-life');
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const body = d.server.pods.get(id)!.body as { pod: Record<string, unknown>; provider: unknown };
    expect(body).toMatchObject({
      pod: { name: ownedName('pi-life', 'conformance'), cloudId: 'c3', gpuType: 'H100_80GB', gpuCount: 1, socket: 'PCIe', dataCenterId: 'US-TX-1' },
      provider: { type: 'massedcompute' },
    });
    const at = { cloud: 'primeintellect', region: offer!.region };
    const seen: unknown[] = [];
    for (let i = 0; i < 4; i++) seen.push((await d.provider.observe(at, 'pi-life'))[0]);
    expect(seen[0]).toMatchObject({ status: 'Running' });
    expect((seen[0] as { endpoint?: unknown }).endpoint).toBeUndefined();
    const n = Number(id.slice(-4));
    expect(seen[1]).toMatchObject({ status: 'Running', endpoint: { host: `192.0.2.${n + 10}` } });
    expect(d.server.http.log.some((l) => l.path.endsWith('/pods/status'))).toBe(true);
    expect(seen[3]).toEqual(seen[1]);
    await d.provider.delete(at, 'pi-life', [id]);
    expect((await d.provider.observe(at, 'pi-life'))[0]?.status).toBe('Terminating');
  });

  it('observe follows pod pages (server caps at 2) to find a VM among many', async () => {
    const [offer] = await planned(d.provider, request);
    const at = { cloud: 'primeintellect', region: offer!.region };
    const names = ['pi-p1', 'pi-p2', 'pi-p3', 'pi-p4', 'pi-p5'];
    for (const n of names) {
      const s = specFor(n);
      await d.provider.create(offer!, await d.provider.prepare(offer!, s), s);
    }
    expect(await d.provider.observe(at, 'pi-p5')).toHaveLength(1);
    for (const n of names) await d.provider.delete(at, n, []);
  });

  it('429 carries Retry-After; wrong key is Credentials and never echoed', async () => {
    d.server.arm('list', 'rate-limit');
    await expect(d.provider.observe({ cloud: 'primeintellect', region: 'X' }, 'x')).rejects.toMatchObject({ kind: 'Transient', retryAfterMs: 12_000 });
    const bad = new PrimeIntellectProvider({ apiKey: 'pit_WRONG_SECRET', baseUrl: d.server.url });
    const e = (await planned(bad, request).catch((x: unknown) => x)) as ProviderError;
    expect(e.kind).toBe('Credentials');
    expect(`${e.message} ${e.stack}`).not.toContain('pit_WRONG_SECRET');
    expect(`${e.message} ${e.stack}`).not.toContain(API_KEY);
  });

  it('fromEnv needs PRIME_API_KEY', () => {
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ PRIME_API_KEY: 'k' })).toBeInstanceOf(PrimeIntellectProvider);
    return expect(fromEnv({ PRIME_API_KEY: API_KEY, PRIME_API_URL: d.server.url })!.plan(request)).resolves.not.toHaveLength(0);
    expect(() => new PrimeIntellectProvider({})).toThrow(/PRIME_API_KEY/);
  });
});
