import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, type ErrorKind } from '../../src/core/errors';
import { LambdaProvider, fromEnv } from '../../src/providers/lambda';
import { classify } from '../../src/providers/lambda/errors';
import { parseGpuDescription, STATUS } from '../../src/providers/lambda/map';
import { API_KEY, BODIES } from '../fixtures/lambda/server';
import { runConformance, specFor, type ConformanceEnv } from './conformance';
import { StatusBodyHttpError as LambdaHttpError } from './double';
import { startLambdaDouble, type LambdaDouble } from './lambda/double';
import { planned, whyNothing } from './planned';

const request = { vmName: 'x', gpu: { model: 'A10', count: 1 }, k8s: false };

runConformance({
  name: 'lambda',
  make: async (): Promise<ConformanceEnv> => {
    const d = await startLambdaDouble();
    return {
      ...d,
      request,
      nativeIdempotency: false,
      kinds: [
        { kind: 'Capacity', primitive: 'create' },
        { kind: 'Quota', primitive: 'create' },
        { kind: 'Credentials', primitive: 'plan' },
        { kind: 'Transient', primitive: 'observe' },
      ],
    };
  },
});

describe('lambda: classify documented error bodies', () => {
  const cases: { name: string; status: number; body: unknown; retryAfter?: string; kind: ErrorKind; block?: string; retryAfterMs?: number; code?: string }[] = [
    { name: 'insufficient capacity', status: 400, body: BODIES.capacity, kind: 'Capacity', code: 'instance-operations/launch/insufficient-capacity' },
    { name: 'quota exceeded blocks the region', status: 400, body: BODIES.quota, kind: 'Quota', block: 'region' },
    { name: 'invalid api key', status: 401, body: BODIES.invalidKey, kind: 'Credentials' },
    { name: 'account inactive', status: 403, body: BODIES.inactive, kind: 'Credentials' },
    { name: 'invalid parameters', status: 400, body: BODIES.invalidParams, kind: 'InvalidRequest' },
    { name: 'unknown ssh key at launch', status: 400, body: BODIES.notFound, kind: 'InvalidRequest' },
    { name: '429 with Retry-After', status: 429, body: BODIES.rateLimited, retryAfter: '7', kind: 'Transient', retryAfterMs: 7000 },
    { name: '429 without Retry-After', status: 429, body: BODIES.rateLimited, kind: 'Transient' },
    { name: '503', status: 503, body: BODIES.internal, kind: 'Transient' },
    { name: '502 with an HTML body', status: 502, body: '<html>bad gateway</html>', kind: 'Transient', code: '502' },
    { name: '401 without a body', status: 401, body: undefined, kind: 'Credentials' },
  ];
  it.each(cases)('$name → $kind', (c) => {
    const e = classify(new LambdaHttpError(c.status, c.body, c.retryAfter));
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.kind).toBe(c.kind);
    expect(e.block).toBe(c.block);
    expect(e.retryAfterMs).toBe(c.retryAfterMs);
    if (c.code) expect(e.code).toBe(c.code);
  });
  it('Retry-After as an HTTP date', () => {
    const when = new Date(Date.now() + 60_000).toUTCString();
    const ms = classify(new LambdaHttpError(429, BODIES.rateLimited, when)).retryAfterMs!;
    expect(ms).toBeGreaterThan(50_000);
    expect(ms).toBeLessThanOrEqual(60_000);
  });
  it('network errors are Transient', () => {
    expect(classify(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })).kind).toBe('Transient');
  });
});

describe('lambda: mapping', () => {
  it('status table is literal and complete for documented values', () => {
    expect(STATUS).toMatchObject({ booting: 'Pending', active: 'Running', terminating: 'Terminating', terminated: null, preempted: null });
  });
  it('parses gpu descriptions', () => {
    expect(parseGpuDescription('H100 (80 GB SXM5)')).toEqual({ model: 'H100', memoryGiB: 80 });
    expect(parseGpuDescription('A10 (24 GB PCIe)')).toEqual({ model: 'A10', memoryGiB: 24 });
  });
});

describe('lambda: vendor specifics against the fixture', () => {
  let d: LambdaDouble;
  beforeAll(async () => {
    d = await startLambdaDouble();
  });
  afterAll(async () => {
    await d.close();
  });

  it('plans cheapest first with USD prices, only regions with capacity, matching the GPU exactly', async () => {
    const offers = await planned(d.provider, request);
    expect(offers.map((o) => `${o.instanceType}@${o.region}`)).toEqual(['gpu_1x_a10@us-east-1', 'gpu_1x_a10@us-west-1']);
    expect(offers[0]).toMatchObject({ pricePerHour: 0.75, currency: 'USD', gpu: { model: 'A10', count: 1, memoryGiB: 24 } });
    expect(await planned(d.provider, { ...request, gpu: { model: 'H100', count: 8 } })).toEqual([]);
    expect(await whyNothing(d.provider, { ...request, gpu: { model: 'B200', count: 1 } })).toBe('no B200 here; GPUs here: A10, H100');
    // "H100 (80 GB PCIe)" is an H100 with 80 GB.
    expect((await planned(d.provider, { ...request, gpu: { model: 'H100-80GB', count: 1 } })).map((o) => o.instanceType)).toEqual(['gpu_1x_h100_pcie']);
  });

  it('launch sends cloud-init user-data, identity tags and exactly one ssh key name', async () => {
    const spec = specFor('lam-ci', { publicKeys: ['ssh-ed25519 AAAAworker w', 'ssh-ed25519 AAAAuser u'], bootScript: { script: 'echo hi', env: { A: '1' } } });
    const [offer] = await planned(d.provider, request);
    const prepared = await d.provider.prepare(offer!, spec);
    await d.provider.create(offer!, prepared, spec);
    const body = d.server.launches.at(-1) as { user_data: string; tags: unknown; ssh_key_names: string[]; name: string };
    expect(body.user_data.startsWith('#cloud-config\n')).toBe(true);
    expect(body.user_data).toContain('ssh-ed25519 AAAAuser u');
    expect(body.user_data).toContain('/var/lib/gpuprov/boot.sh');
    expect(body.tags).toEqual([
      { key: 'gpuprov-vm-name', value: 'lam-ci' },
      { key: 'gpuprov-owner', value: 'conformance' },
    ]);
    expect(body.ssh_key_names).toHaveLength(1);
    expect(body.name).toBe('gpuprov-lam-ci');
    await d.provider.delete({ cloud: 'lambda', region: offer!.region }, 'lam-ci', []);
  });

  it('registers the ssh key once; a name clash with the same key is success', async () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClash clash@test';
    const spec = specFor('lam-key', { publicKeys: [key] });
    const [offer] = await planned(d.provider, request);
    const a = await d.provider.prepare(offer!, spec);
    const b = await d.provider.prepare(offer!, { ...spec, publicKeys: [key.replace('clash@test', 'other-comment')] });
    expect(b).toEqual(a);
    expect(d.server.sshKeys.filter((k) => k.public_key.includes('AAAAIClash'))).toHaveLength(1);
    // Someone registered it between our list and our add: the POST clashes (global/duplicate).
    const racing = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIRace race@test';
    const name = ((await d.provider.prepare(offer!, specFor('lam-race', { publicKeys: [racing] }))) as { sshKeyName: string }).sshKeyName;
    d.server.sshKeys.splice(
      d.server.sshKeys.findIndex((k) => k.name === name),
      1,
    );
    d.server.http.arm({ method: 'POST', pattern: '/api/v1/ssh-keys', status: 400, body: BODIES.duplicate });
    expect(await d.provider.prepare(offer!, specFor('lam-race', { publicKeys: [racing] }))).toEqual({ sshKeyName: name });
  });

  it('observe matches by tag client-side: other VMs, other regions and terminated instances are ignored', async () => {
    const [offer] = await planned(d.provider, request);
    const spec = specFor('lam-obs');
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const other = specFor('lam-obs-2');
    await d.provider.create(offer!, await d.provider.prepare(offer!, other), other);
    const at = { cloud: 'lambda', region: offer!.region };
    expect((await d.provider.observe(at, 'lam-obs')).map((o) => o.id)).toEqual([id]);
    expect(await d.provider.observe({ cloud: 'lambda', region: 'us-west-1' }, 'lam-obs')).toEqual([]);
    const first = (await d.provider.observe(at, 'lam-obs'))[0]!;
    expect(first).toMatchObject({ status: 'Running', endpoint: { port: 22, user: 'ubuntu' } });
    await d.provider.delete(at, 'lam-obs', [id, 'deadbeef-unknown']);
    expect((await d.provider.observe(at, 'lam-obs'))[0]?.status).toBe('Terminating');
    expect(await d.provider.observe(at, 'lam-obs')).toEqual([]);
    await d.provider.delete(at, 'lam-obs-2', []);
  });

  it('429 carries Retry-After; 5xx is Transient', async () => {
    d.server.arm('instances', 'rate-limit');
    await expect(d.provider.observe({ cloud: 'lambda', region: 'us-east-1' }, 'x')).rejects.toMatchObject({ kind: 'Transient', retryAfterMs: 7000 });
    d.server.arm('instances', 'rate-limit-no-header');
    const e = (await d.provider.observe({ cloud: 'lambda', region: 'us-east-1' }, 'x').catch((x: unknown) => x)) as ProviderError;
    expect(e.kind).toBe('Transient');
    expect(e.retryAfterMs).toBeUndefined();
  });

  it('a wrong key is Credentials and never echoed', async () => {
    const bad = new LambdaProvider({ apiKey: 'secret-wrong-key-XYZ', baseUrl: d.server.url });
    const e = (await planned(bad, request).catch((x: unknown) => x)) as ProviderError;
    expect(e.kind).toBe('Credentials');
    expect(JSON.stringify({ m: e.message, s: e.stack, c: String(e.cause) })).not.toContain('secret-wrong-key-XYZ');
    expect(JSON.stringify({ m: e.message, s: e.stack })).not.toContain(API_KEY);
  });

  it('fromEnv honours LAMBDA_API_URL', async () => {
    expect((await fromEnv({ LAMBDA_API_KEY: API_KEY, LAMBDA_API_URL: d.server.url })!.plan(request)).length).toBeGreaterThan(0);
  });

  it('an unexpected response shape is Failed (bad-response), not a crash', async () => {
    d.server.http.arm({ method: 'GET', pattern: '/api/v1/instances', status: 200, body: { data: [{ id: 7 }] } });
    await expect(d.provider.observe({ cloud: 'lambda', region: 'us-east-1' }, 'x')).rejects.toMatchObject({ kind: 'Failed', code: 'bad-response' });
  });

  it('fromEnv needs LAMBDA_API_KEY; explicit construction without it names the variable', () => {
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ LAMBDA_API_KEY: 'k', LAMBDA_API_URL: d.server.url })).toBeInstanceOf(LambdaProvider);
    expect(() => new LambdaProvider({})).toThrow(/LAMBDA_API_KEY/);
    expect(() => new LambdaProvider({})).toThrow(ProviderError);
  });
});
