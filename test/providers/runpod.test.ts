import { ownedName } from '../../src/providers/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorKind, ProviderError } from '../../src/core/errors';
import { RunPodProvider, fromEnv } from '../../src/providers/runpod';
import { classify } from '../../src/providers/runpod/errors';
import { gpuModelMatches } from '../../src/core/gpu-names';
import { STATUS, mergeKeys, sshEndpoint } from '../../src/providers/runpod/map';
import { API_KEY, BODIES } from '../fixtures/runpod/server';
import { runConformance, specFor, type ConformanceEnv } from './conformance';
import { StatusFirstHttpError as RunPodHttpError } from './double';
import { startRunPodDouble, type RunPodDouble } from './runpod/double';
import { planned } from './planned';

const request = { vmName: 'x', gpu: { model: 'RTX4090', count: 1 }, k8s: false };

runConformance({
  name: 'runpod',
  make: async (): Promise<ConformanceEnv> => ({
    ...(await startRunPodDouble()),
    request,
    nativeIdempotency: false,
    kinds: [
      { kind: 'Capacity', primitive: 'create' },
      { kind: 'Quota', primitive: 'create' },
      { kind: 'Unavailable', primitive: 'create' },
      { kind: 'Credentials', primitive: 'prepare' },
      { kind: 'Transient', primitive: 'observe' },
      { kind: 'InvalidRequest', primitive: 'create' },
    ],
  }),
});

describe('runpod: classify documented error bodies', () => {
  const cases: { name: string; status: number; body: unknown; op: string; retryAfter?: string; kind: ErrorKind; block?: string; retryAfterMs?: number }[] = [
    { name: 'create 400 (no capacity)', status: 400, body: BODIES.capacity, op: 'create', kind: 'Capacity' },
    { name: '400 outside create is a request problem', status: 400, body: BODIES.includeNeedsProduct, op: 'catalog', kind: 'InvalidRequest' },
    { name: '402 insufficient balance blocks the cloud', status: 402, body: BODIES.balance, op: 'create', kind: 'Quota', block: 'cloud' },
    { name: 'create 403 (pool not allowed)', status: 403, body: BODIES.pool, op: 'create', kind: 'Unavailable' },
    { name: '403 on list (key lacks scope)', status: 403, body: BODIES.pool, op: 'list', kind: 'Credentials' },
    { name: '401 missing bearer token', status: 401, body: BODIES.missingToken, op: 'list', kind: 'Credentials' },
    { name: '422 contract', status: 422, body: BODIES.contract, op: 'create', kind: 'InvalidRequest' },
    { name: '429 with Retry-After', status: 429, body: BODIES.rate, op: 'list', retryAfter: '30', kind: 'Transient', retryAfterMs: 30_000 },
    { name: '429 without Retry-After', status: 429, body: BODIES.rate, op: 'list', kind: 'Transient' },
    { name: '502 upstream', status: 502, body: BODIES.upstream, op: 'create', kind: 'Transient' },
    {
      name: '409 cluster pod',
      status: 409,
      body: { title: 'Conflict', status: 409, detail: 'pod belongs to a cluster' },
      op: 'delete',
      kind: 'InvalidRequest',
    },
  ];
  it.each(cases)('$name → $kind', (c) => {
    const e = classify(new RunPodHttpError(c.status, c.body, c.op, c.retryAfter));
    expect(e.kind).toBe(c.kind);
    expect(e.block).toBe(c.block);
    expect(e.retryAfterMs).toBe(c.retryAfterMs);
  });
  it('uses the problem detail as the message', () => {
    expect(classify(new RunPodHttpError(400, BODIES.capacity, 'create')).message).toContain('no longer any instances available');
  });
});

describe('runpod: mapping', () => {
  it('status table', () => {
    expect(STATUS).toMatchObject({ PROVISIONING: 'Pending', STARTING: 'Pending', RUNNING: 'Running', EXITED: 'Stopped', ERROR: 'Failed', TERMINATED: null });
  });
  it('model matching uses whole tokens', () => {
    expect(gpuModelMatches('RTX4090', 'NVIDIA GeForce RTX 4090')).toBe(true);
    expect(gpuModelMatches('A10', 'NVIDIA A100 80GB PCIe')).toBe(false);
    expect(gpuModelMatches('A100', 'NVIDIA A100-SXM4-40GB')).toBe(true);
  });
  it('endpoint from ssh.direct, v1 publicIp + portMappings, or runtime ports; never the proxy', () => {
    expect(sshEndpoint({ id: 'a', ssh: { direct: { host: '1.2.3.4', port: 41022, username: 'root' }, proxy: null } })).toEqual({
      host: '1.2.3.4',
      port: 41022,
      user: 'root',
    });
    expect(sshEndpoint({ id: 'a', publicIp: '5.6.7.8', portMappings: { '22': 10341 } })).toEqual({ host: '5.6.7.8', port: 10341, user: 'root' });
    expect(sshEndpoint({ id: 'a', runtime: { ports: [{ private: 22, public: 12000, type: 'tcp', ip: '9.9.9.9', isIpPublic: true }] } })).toEqual({
      host: '9.9.9.9',
      port: 12000,
      user: 'root',
    });
    expect(sshEndpoint({ id: 'a', ssh: { proxy: { host: 'ssh.runpod.io', port: 22, username: 'tok' }, direct: null } })).toBeUndefined();
  });
  it('merging keeps existing keys verbatim and does not duplicate ours', () => {
    const mine = 'ssh-ed25519 AAAAmine me';
    const a = mergeKeys(['ssh-rsa AAAAx other'], mine);
    expect(a).toEqual({ keys: ['ssh-rsa AAAAx other', mine], changed: true });
    expect(mergeKeys(a.keys, 'ssh-ed25519 AAAAmine different-comment')).toEqual({ keys: a.keys, changed: false });
  });
});

describe('runpod: vendor specifics against the fixture', () => {
  let d: RunPodDouble;
  beforeAll(async () => {
    d = await startRunPodDouble();
  });
  afterAll(async () => {
    await d.close();
  });

  it('plans one offer per data centre with stock, per-GPU price × count, cheapest first', async () => {
    const offers = await planned(d.provider, request);
    expect(offers.map((o) => o.region)).toEqual(['EU-RO-1', 'US-TX-3']);
    expect(offers[0]).toMatchObject({ instanceType: 'NVIDIA GeForce RTX 4090', pricePerHour: 0.69, currency: 'USD' });
    const two = await planned(d.provider, { ...request, gpu: { model: 'A100-80GB', count: 2 } });
    expect(two).toHaveLength(1);
    expect(two[0]).toMatchObject({ instanceType: 'NVIDIA A100 80GB PCIe', pricePerHour: 3.28 });
    await expect(planned(d.provider, { ...request, gpu: undefined })).rejects.toMatchObject({ kind: 'InvalidRequest' });
  });

  it('prepare merges our key into the account without losing existing keys', async () => {
    const before = [...d.server.accountKeys];
    const spec = specFor('rp-keys', { publicKeys: ['ssh-ed25519 AAAAworkerkey worker', 'ssh-ed25519 AAAAuserkey user'] });
    const [offer] = await planned(d.provider, request);
    const a = await d.provider.prepare(offer!, spec);
    const b = await d.provider.prepare(offer!, spec);
    expect(b).toEqual(a);
    expect(d.server.accountKeys).toEqual([...before, 'ssh-ed25519 AAAAworkerkey worker']);
    expect(d.server.http.log.filter((l) => l.method === 'PUT').length).toBe(1);
  });

  it('create asks for a direct-ssh container pod; observe reports the NAT port and root', async () => {
    const spec = specFor('rp-ssh', { publicKeys: ['ssh-ed25519 AAAAworkerkey worker', 'ssh-ed25519 AAAAuserkey user'], openPorts: [22, 8888] });
    const [offer] = await planned(d.provider, request);
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const body = d.server.creates.at(-1) as Record<string, unknown>;
    expect(body).toMatchObject({
      name: ownedName('rp-ssh', 'conformance'),
      startSsh: true,
      ports: ['22/tcp', '8888/tcp'],
      dataCenterIds: [offer!.region],
      gpu: { id: offer!.instanceType, count: 1 },
    });
    expect((body.env as Record<string, string>).PUBLIC_KEY).toBe('ssh-ed25519 AAAAworkerkey worker\nssh-ed25519 AAAAuserkey user');
    const at = { cloud: 'runpod', region: offer!.region };
    expect((await d.provider.observe(at, 'rp-ssh'))[0]).toMatchObject({ id, status: 'Pending' });
    expect(await d.provider.observe({ cloud: 'runpod', region: 'US-TX-3' }, 'rp-ssh')).toEqual([]);
    const running = (await d.provider.observe(at, 'rp-ssh'))[0]!;
    expect(running.status).toBe('Running');
    expect(running.endpoint).toEqual({ host: expect.stringMatching(/^203\.0\.113\./), port: d.server.pods.get(id)!.natPort, user: 'root' });
    expect(running.endpoint!.port).not.toBe(22);
    await d.provider.delete(at, 'rp-ssh', [id]);
    expect(d.server.liveCount()).toBe(0);
  });

  it('capabilities: container cloud', () => {
    expect(d.provider.capabilities()).toMatchObject({ k8s: false, bootScript: false, sshUser: { kind: 'provider' } });
  });

  it('429 carries Retry-After; a wrong key is Credentials and not echoed', async () => {
    d.server.arm('list', 'rate-limit');
    await expect(d.provider.observe({ cloud: 'runpod', region: 'EU-RO-1' }, 'x')).rejects.toMatchObject({ kind: 'Transient', retryAfterMs: 30_000 });
    const bad = new RunPodProvider({ apiKey: 'rpa_WRONG_SECRET', baseUrl: d.server.url });
    const e = (await bad.observe({ cloud: 'runpod', region: 'EU-RO-1' }, 'x').catch((x: unknown) => x)) as ProviderError;
    expect(e.kind).toBe('Credentials');
    expect(`${e.message} ${e.stack}`).not.toContain('rpa_WRONG_SECRET');
    expect(`${e.message} ${e.stack}`).not.toContain(API_KEY);
  });

  it('fromEnv needs RUNPOD_API_KEY', () => {
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ RUNPOD_API_KEY: 'k' })).toBeInstanceOf(RunPodProvider);
    return expect(fromEnv({ RUNPOD_API_KEY: API_KEY, RUNPOD_API_URL: d.server.url })!.plan(request)).resolves.not.toHaveLength(0);
    expect(() => new RunPodProvider({})).toThrow(/RUNPOD_API_KEY/);
  });
});
