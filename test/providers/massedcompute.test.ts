import { ownedName } from '../../src/providers/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorKind, ProviderError } from '../../src/core/errors';
import { fromEnv, MassedComputeProvider } from '../../src/providers/massedcompute';
import { HttpError as MassedHttpError } from '../../src/providers/http';
import { classify } from '../../src/providers/massedcompute/errors';
import { runConformance, specFor } from './conformance';
import { ERROR_BODIES, type MassedErrorKind } from '../fixtures/massedcompute/server';
import { startMassedComputeDouble, type MassedComputeDouble } from './massedcompute/double';
import { planned, whyNothing } from './planned';

runConformance({
  name: 'massedcompute',
  make: async () => {
    const d = await startMassedComputeDouble();
    return { ...d, nativeIdempotency: false, maxPolls: 10 };
  },
});

describe('massedcompute error classification', () => {
  const cases: [MassedErrorKind, ErrorKind, number | undefined][] = [
    ['capacity', 'Capacity', undefined],
    ['quota', 'Quota', undefined],
    ['credentials', 'Credentials', undefined],
    ['rate-limit', 'Transient', 60_000],
    ['rate-limit-no-retry-after', 'Transient', undefined],
    ['server-error', 'Transient', undefined],
  ];
  it.each(cases)('%s → %s', (name, kind, retry) => {
    const r = ERROR_BODIES[name];
    const e = classify(new MassedHttpError('op', r.status, r.body, r.headers?.['retry-after']));
    expect(e.kind).toBe(kind);
    expect(e.retryAfterMs).toBe(retry);
  });
  it.each([
    [403, { message: 'This action is unauthorized.' }, 'Credentials'],
    [422, { message: 'The selected product name is invalid.' }, 'InvalidRequest'],
    [400, 'GPU sold out', 'Capacity'],
    [502, '<html>Bad gateway</html>', 'Transient'],
  ] as const)('HTTP %i %j → %s', (status, body, kind) => {
    expect(classify(new MassedHttpError('op', status, body)).kind).toBe(kind);
  });
});

describe('massedcompute specifics', () => {
  let d: MassedComputeDouble;
  beforeAll(async () => {
    d = await startMassedComputeDouble();
  });
  afterAll(async () => d.close());

  it('fromEnv needs MASSED_COMPUTE_API_KEY; explicit construction without it names the variable', () => {
    expect(fromEnv({})).toBeUndefined();
    expect(fromEnv({ MASSED_COMPUTE_API_KEY: 'k' })).toBeInstanceOf(MassedComputeProvider);
    expect(() => new MassedComputeProvider({})).toThrow(/MASSED_COMPUTE_API_KEY/);
  });

  it('plan: products with capacity, region "any", price from cents, count and model from the product name', async () => {
    expect(await planned(d.provider, { vmName: 'p', gpu: { model: 'L40', count: 1 }, k8s: false })).toEqual([
      expect.objectContaining({ region: 'any', instanceType: 'gpu_1x_l40', pricePerHour: 0.99, currency: 'USD', gpu: { model: 'L40', count: 1 } }),
    ]);
    expect(await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 8 }, k8s: false })).toHaveLength(1);
    expect(await planned(d.provider, { vmName: 'p', gpu: { model: 'A6000', count: 1 }, k8s: false })).toEqual([]);
    expect(await whyNothing(d.provider, { vmName: 'p', gpu: { model: 'B200', count: 1 }, k8s: false })).toMatch(/^no B200 here; GPUs here: /);
    // The cloud places the VM: its one region is "any", and a named region plans nothing.
    expect(await whyNothing(d.provider, { vmName: 'p', gpu: { model: 'L40', count: 1 }, k8s: false, regions: ['us-east'] })).toBe(
      'nothing in us-east; regions here: any',
    );
  });

  it('launch: regionName any, the boot script as the startup command, punctuation-free hashed key names', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'L40', count: 1 }, k8s: false });
    const spec = specFor('mc-boot', { bootScript: { script: 'echo hi', env: { X: 'y z' } } });
    const prepared = await d.provider.prepare(offer!, spec);
    expect(await d.provider.prepare(offer!, spec)).toEqual(prepared);
    expect(prepared).toEqual({ imageId: 12, sshKeys: [expect.stringMatching(/^gpuprov[0-9a-f]{12}$/)] });
    expect(d.server.keys).toHaveLength(1);
    const id = await d.provider.create(offer!, prepared, spec);
    const vm = d.server.vms.get(id)!;
    expect(vm).toMatchObject({ name: ownedName('mc-boot', 'conformance'), regionName: 'any', product: 'gpu_1x_l40' });
    expect(vm.command).toContain("export X='y z'");
    expect(vm.command.startsWith('#!/bin/bash')).toBe(true);
  });

  it('observe: booting and rented-but-not-booted are Pending; then Running with the provider-chosen user', async () => {
    const at = { cloud: 'massedcompute', region: 'any' };
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const [o] = await d.provider.observe(at, 'mc-boot');
      seen.push(`${o!.status}${o!.endpoint ? '+ep' : ''}`);
    }
    expect(seen).toEqual(['Pending', 'Pending', 'Running+ep', 'Running+ep']);
    const [o] = await d.provider.observe(at, 'mc-boot');
    expect(o!.endpoint).toEqual({ host: expect.stringMatching(/^198\.18\.0\./), port: 22, user: 'Ubuntu' });
    await d.provider.delete(at, 'mc-boot', []);
    expect(await d.provider.observe(at, 'mc-boot')).toEqual([]);
  });

  it('bad token → Credentials, and the token never appears in the error', async () => {
    const p = new MassedComputeProvider({ token: 'mc-sekret-789', baseUrl: d.server.url });
    const err = (await planned(p, { vmName: 'p', k8s: false }).catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('Credentials');
    expect(`${err.message} ${JSON.stringify(err)} ${String(err.stack)}`).not.toContain('mc-sekret-789');
  });
});
