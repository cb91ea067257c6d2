import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorKind, ProviderError } from '../../src/core/errors';
import { fromEnv, HyperstackProvider } from '../../src/providers/hyperstack';
import { HttpError as HyperstackHttpError } from '../../src/providers/http';
import { classify } from '../../src/providers/hyperstack/errors';
import { runConformance, specFor } from './conformance';
import { ERROR_BODIES, type HsErrorKind } from '../fixtures/hyperstack/server';
import { startHyperstackDouble, type HyperstackDouble } from './hyperstack/double';
import { planned, whyNothing } from './planned';

runConformance({
  name: 'hyperstack',
  make: async () => {
    const d = await startHyperstackDouble();
    return { ...d, nativeIdempotency: false, maxPolls: 10 };
  },
});

describe('hyperstack error classification (documented bodies)', () => {
  const cases: [HsErrorKind, ErrorKind, number | undefined][] = [
    ['capacity', 'Capacity', undefined],
    ['quota', 'Quota', undefined],
    ['credentials', 'Credentials', undefined],
    ['rate-limit', 'Transient', 7000],
    ['rate-limit-no-retry-after', 'Transient', undefined],
    ['server-error', 'Transient', undefined],
    ['delete-while-creating', 'Transient', undefined],
  ];
  it.each(cases)('%s → %s', (name, kind, retry) => {
    const r = ERROR_BODIES[name];
    const e = classify(new HyperstackHttpError('op', r.status, r.body, r.headers?.['retry-after']));
    expect(e.kind).toBe(kind);
    expect(e.retryAfterMs).toBe(retry);
  });
  it.each([
    [403, { status: false, message: 'Forbidden', error_reason: 'forbidden' }, 'Credentials'],
    [400, { status: false, message: 'Invalid image name' }, 'InvalidRequest'],
    [404, { status: false, message: 'VM not found', error_reason: 'not_found' }, 'InvalidRequest'],
    [409, { status: false, message: 'Conflict' }, 'Transient'],
    [503, 'Service Unavailable', 'Transient'],
  ] as const)('HTTP %i → %s', (status, body, kind) => {
    expect(classify(new HyperstackHttpError('op', status, body)).kind).toBe(kind);
  });
  it('insufficient balance blocks the whole cloud', () => {
    const r = ERROR_BODIES.quota;
    expect(classify(new HyperstackHttpError('op', r.status, r.body)).block).toBe('cloud');
  });
  it('network errors are Transient', () => {
    expect(classify(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).kind).toBe('Transient');
  });
});

describe('hyperstack specifics', () => {
  let d: HyperstackDouble;
  beforeAll(async () => {
    d = await startHyperstackDouble({ pageSize: 2 });
  });
  afterAll(async () => d.close());

  it('fromEnv needs HYPERSTACK_API_KEY; explicit construction without it names the variable', () => {
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ HYPERSTACK_API_KEY: 'k' })).toBeInstanceOf(HyperstackProvider);
    expect(() => new HyperstackProvider({})).toThrow(/HYPERSTACK_API_KEY/);
  });

  it('plan: stocked flavors only, priced per GPU from the pricebook, unplannable → InvalidRequest', async () => {
    const a100 = await planned(d.provider, { vmName: 'p', gpu: { model: 'A100-80GB', count: 1 }, k8s: false });
    expect(a100).toEqual([expect.objectContaining({ region: 'NORWAY-1', instanceType: 'n3-A100x1', pricePerHour: 1.35, currency: 'USD' })]);
    expect(await planned(d.provider, { vmName: 'p', gpu: { model: 'A100', count: 2 }, k8s: false })).toEqual([]);
    expect(await whyNothing(d.provider, { vmName: 'p', gpu: { model: 'B200', count: 1 }, k8s: false })).toBe(
      'no B200 here; GPUs here: A100-80G-PCIe, H100-80G-PCIe',
    );
  });

  it('prepare find-or-creates the region environment and the hashed key pair in it', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const spec = specFor('hs-prep');
    const a = await d.provider.prepare(offer!, spec);
    const posts = (): number => d.server.http.log.filter((l) => l.method === 'POST').length;
    const before = posts();
    const b = await d.provider.prepare(offer!, spec);
    expect(b).toEqual(a);
    expect(posts()).toBe(before);
    expect(a).toMatchObject({ environment: 'gpuprov-CANADA-1', keyName: expect.stringMatching(/^gpuprov-[0-9a-f]{12}$/) });
    expect(d.server.environments.get('gpuprov-CANADA-1')).toBe('CANADA-1');
    expect(d.server.keypairs.filter((k) => k.environment === 'gpuprov-CANADA-1')).toHaveLength(1);
  });

  it('create sends labels, cloud-init, fixed port 22 and open ports; Running only once the floating IP is ATTACHED', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const spec = specFor('hs-boot', { openPorts: [22, 6443], bootScript: { script: 'echo hi', env: { A: '1' } } });
    const at = { cloud: 'hyperstack', region: offer!.region };
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const vm = d.server.vms.get(Number(id))!;
    expect(vm.labels).toEqual(['gpuprov-vm-name=hs-boot', 'gpuprov-owner=conformance']);
    expect(vm.userData.startsWith('#cloud-config')).toBe(true);
    expect(vm.securityRules).toHaveLength(2);
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [o] = await d.provider.observe(at, 'hs-boot');
      seen.push(`${o!.status}${o!.endpoint ? '+ep' : ''}`);
    }
    // ACTIVE with ATTACHING floating IP must not look booted.
    expect(seen.slice(0, 2)).toEqual(['Pending', 'Pending']);
    expect(seen.at(-1)).toBe('Running+ep');
    const [o] = await d.provider.observe(at, 'hs-boot');
    expect(o!.endpoint).toEqual({ host: expect.stringMatching(/^198\.51\.100\./), port: 22, user: 'ubuntu' });
    await d.provider.delete(at, 'hs-boot', [id]);
  });

  it('observe pages through the list and filters by identity exactly', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const at = { cloud: 'hyperstack', region: offer!.region };
    for (const n of ['pg-a', 'pg-ab', 'pg-abc']) {
      const s = specFor(n);
      await d.provider.create(offer!, await d.provider.prepare(offer!, s), s);
    }
    const s = specFor('pg-a');
    await d.provider.create(offer!, await d.provider.prepare(offer!, s), s);
    const found = await d.provider.observe(at, 'pg-a');
    expect(found).toHaveLength(2);
    expect(d.server.http.log.some((l) => l.path === '/core/virtual-machines' && l.method === 'GET')).toBe(true);
    for (const n of ['pg-a', 'pg-ab', 'pg-abc']) await d.provider.delete(at, n, []);
    for (let i = 0; i < 3; i++) await d.provider.observe(at, 'pg-a');
    expect(await d.provider.observe(at, 'pg-ab')).toEqual([]);
  });

  it('delete during creation is Transient (the vendor refuses until creation finishes)', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: false });
    const spec = specFor('hs-early');
    const at = { cloud: 'hyperstack', region: offer!.region };
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    d.server.rejectDeleteWhileCreating = true;
    d.server.vms.get(Number(id))!.status = 'CREATING';
    d.server.http.arm({ method: 'GET', pattern: '/core/virtual-machines', status: 200, body: { status: true, message: 'ok', instances: [], count: 0 } });
    const err = await d.provider.delete(at, spec.vmName, [id]).catch((e: unknown) => e);
    expect((err as ProviderError).kind).toBe('Transient');
    d.server.rejectDeleteWhileCreating = false;
    await d.provider.delete(at, spec.vmName, [id]);
  });

  it('bad credentials → Credentials, and the key never appears in the error', async () => {
    const p = new HyperstackProvider({ apiKey: 'sekret-hs-key-123', baseUrl: d.server.url });
    const err = (await planned(p, { vmName: 'p', k8s: false }).catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('Credentials');
    expect(`${err.message} ${JSON.stringify(err)} ${String(err.stack)}`).not.toContain('sekret-hs-key-123');
  });
});
