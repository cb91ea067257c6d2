/**
 * Nebius specifics beyond the conformance suite: operations awaited within the call, disks in an
 * error state replaced, calculator failures visible, and service-account tokens renewed before
 * expiry (a fake clock; no real waiting) without the key or a token reaching errors or logs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NebiusProvider, fromEnv } from '../../src/providers/nebius';
import { readServiceAccountFile } from '../../src/providers/nebius/auth';
import { serviceAddress } from '../../src/providers/nebius/endpoints';
import { serviceAccountCredentials } from '../fixtures/nebius/iam';
import { PROJECTS, startNebiusServer, type NebiusServer } from '../fixtures/nebius/server';
import { specFor } from './conformance';
import { planned } from './planned';

const AT = { cloud: 'nebius', region: 'eu-north1' };
const H100 = { vmName: 'l', gpu: { model: 'H100', count: 1 }, k8s: false, regions: ['eu-north1'] };

describe('nebius: addresses', () => {
  it('are derived as the SDK derives them', () => {
    expect(serviceAddress('nebius.billing.v1.CalculatorService')).toBe('api.calculator.billing-data-plane.api.nebius.cloud:443');
    expect(serviceAddress('nebius.compute.v1.InstanceService')).toBe('compute.api.nebius.cloud:443');
    expect(serviceAddress('nebius.iam.v1.TokenExchangeService')).toBe('tokens.iam.api.nebius.cloud:443');
  });
});

describe('nebius: operations, disks, prices', () => {
  let server: NebiusServer;
  let provider: NebiusProvider;
  const warnings: string[] = [];
  let sleeps = 0;
  beforeAll(async () => {
    server = await startNebiusServer();
    const sleep = async (): Promise<void> => {
      sleeps += 1;
    };
    provider = new NebiusProvider({
      token: 'nb-test-token-0123456789',
      projects: { ...PROJECTS },
      endpoint: server.endpoint,
      insecure: true,
      operationWaitMs: 3_000,
      operationPollMs: 1_000,
      sleep,
      warn: (m) => warnings.push(m),
    });
  });
  afterAll(async () => server.close());

  it('a create whose operation fails later is classified (capacity, quota with region scope)', async () => {
    const [offer] = await planned(provider, H100);
    const spec = specFor('nb-late');
    const prepared = await provider.prepare(offer!, spec);
    server.arm('InstanceService.Create', 'capacityLate');
    await expect(provider.create(offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Capacity' });
    server.arm('InstanceService.Create', 'quotaLate');
    await expect(provider.create(offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Quota', block: 'region' });
    expect(server.log.filter((r) => r === 'OperationService.Get').length).toBeGreaterThanOrEqual(2);
  });

  it('an operation still running after the bounded wait is left to observe', async () => {
    const [offer] = await planned(provider, H100);
    const spec = specFor('nb-slow');
    const prepared = await provider.prepare(offer!, spec);
    server.holdOperations(true);
    sleeps = 0;
    const before = server.log.filter((r) => r === 'OperationService.Get').length;
    try {
      const id = await provider.create(offer!, prepared, spec);
      expect(id).toMatch(/^computeinstance-/);
    } finally {
      server.holdOperations(false);
    }
    expect(sleeps).toBe(3); // 3 s of waiting at 1 s per look, then the call returns
    expect(server.log.filter((r) => r === 'OperationService.Get').length - before).toBe(3);
  });

  it.each(['BROKEN', 'ERROR'])('a boot disk in %s is deleted and replaced, never reused', async (state) => {
    const [offer] = await planned(provider, H100);
    const spec = specFor(`nb-disk-${state.toLowerCase()}`);
    const first = await provider.prepare(offer!, spec);
    const disk = server.disks().find((d) => d.metadata.id === (first as { diskId: string }).diskId)!;
    disk.state = state;
    const second = (await provider.prepare(offer!, spec)) as { diskId: string };
    expect(second.diskId).not.toBe(disk.metadata.id);
    expect(server.disks().map((d) => d.metadata.id)).not.toContain(disk.metadata.id);
    await provider.create(offer!, second, spec);
    await provider.delete(AT, spec.vmName, []);
  });

  it('a disk still deleting fails the attempt as Transient', async () => {
    const [offer] = await planned(provider, H100);
    const spec = specFor('nb-disk-deleting');
    const first = (await provider.prepare(offer!, spec)) as { diskId: string };
    server.disks().find((d) => d.metadata.id === first.diskId)!.state = 'DELETING';
    await expect(provider.prepare(offer!, spec)).rejects.toMatchObject({ kind: 'Transient', code: 'DISK_DELETING' });
  });

  it('a calculator failure leaves offers visibly unpriced, with the classified reason warned', async () => {
    warnings.length = 0;
    server.arm('CalculatorService.EstimateBatch', 'permissionDenied');
    const offers = await provider.plan(H100);
    expect(offers.every((o) => o.pricePerHour === undefined)).toBe(true);
    expect(offers[0]?.extra).toMatchObject({
      priceError: expect.stringMatching(/^Credentials: CalculatorService.EstimateBatch: PERMISSION_DENIED/) as unknown,
    });
    expect(warnings).toEqual([expect.stringMatching(/^nebius: eu-north1: offers unpriced: Credentials: /) as unknown]);
  });
});

describe('nebius: service-account authentication', () => {
  let server: NebiusServer;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    server = await startNebiusServer();
    dir = mkdtempSync(join(tmpdir(), 'gpuprov-nebius-'));
    file = join(dir, 'sa.json');
    writeFileSync(file, serviceAccountCredentials(), { mode: 0o600 });
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  });

  it('exchanges the key for a token, reuses it, and renews it before expiry (fake clock)', async () => {
    let now = 1_700_000_000_000;
    server.iam.expiresIn = 3600;
    const logged: string[] = [];
    const p = new NebiusProvider({
      serviceAccount: readServiceAccountFile(file),
      projects: { ...PROJECTS },
      endpoint: server.endpoint,
      insecure: true,
      now: () => now,
      sleep: async () => {},
      warn: (m) => logged.push(m),
    });
    await p.observe(AT, 'x');
    await p.observe(AT, 'x');
    expect(server.iam.issued).toHaveLength(1);
    now += 3_000_000; // 50 min: still inside 90% of the hour
    await p.observe(AT, 'x');
    expect(server.iam.issued).toHaveLength(1);
    now += 300_000; // 55 min: past 90%, not yet expired
    await Promise.all([p.observe(AT, 'x'), p.observe(AT, 'x')]);
    expect(server.iam.issued).toHaveLength(2); // one renewal shared by concurrent calls
    const last = server.log.lastIndexOf('TokenExchangeService.Exchange');
    expect(server.log.slice(last + 1)).toContain('InstanceService.List');
    // A failing exchange while the token lives: the old token carries on.
    now += 3_300_000;
    server.arm('TokenExchangeService.Exchange', 'unavailable');
    await p.observe(AT, 'x');
    expect(server.iam.issued).toHaveLength(2);
    expect(logged).toEqual([]);
  });

  it('a refused exchange is Credentials, and neither the key nor a token appears in the error', async () => {
    const p = new NebiusProvider({
      serviceAccount: readServiceAccountFile(file),
      projects: { ...PROJECTS },
      endpoint: server.endpoint,
      insecure: true,
      sleep: async () => {},
    });
    server.arm('TokenExchangeService.Exchange', 'unauthenticated');
    const err = (await p.observe(AT, 'x').catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ kind: 'Credentials' });
    const text = JSON.stringify({ m: err.message, s: err.stack, c: String((err as { cause?: unknown }).cause) });
    const pem = (JSON.parse(serviceAccountCredentials()) as { 'subject-credentials': { 'private-key': string } })['subject-credentials']['private-key'];
    expect(text).not.toContain(pem.split('\n')[1]!);
    for (const t of server.iam.issued) expect(text).not.toContain(t);
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\./); // no JWT
  });

  it('fromEnv prefers NEBIUS_SERVICE_ACCOUNT_FILE; a broken file is Credentials naming the file, not its content', () => {
    expect(fromEnv({ NEBIUS_SERVICE_ACCOUNT_FILE: file, NEBIUS_PROJECT_ID: 'project-e00abc' })?.name).toBe('nebius');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ 'subject-credentials': { alg: 'RS256', 'private-key': 'not-a-key-SECRETMATERIAL', kid: 'k', iss: 's', sub: 's' } }));
    let err: unknown;
    try {
      fromEnv({ NEBIUS_SERVICE_ACCOUNT_FILE: bad, NEBIUS_PROJECT_ID: 'project-e00abc' });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ kind: 'Credentials', message: expect.stringContaining(bad) as unknown });
    expect((err as Error).message).not.toContain('SECRETMATERIAL');
  });
});
