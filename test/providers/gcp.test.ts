import { ownedName } from '../../src/providers/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors';
import { GcpProvider, fromEnv } from '../../src/providers/gcp';
import { runConformance, specFor } from './conformance';
import { GCP_REQUEST, gcpConformanceEnv, startGcpDouble, type GcpDouble } from './gcp/double';
import { planned, whyNothing } from './planned';

runConformance({ name: 'gcp', make: gcpConformanceEnv });

describe('gcp adapter', () => {
  let d: GcpDouble;
  beforeAll(async () => {
    d = await startGcpDouble({ regions: ['us-central1', 'us-east1'] });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('plans only zones that list the accelerator, in the configured regions, cheapest first', async () => {
    const t4 = await planned(d.provider, GCP_REQUEST);
    expect(t4.map((o) => o.zone)).toEqual(['us-central1-a', 'us-central1-b', 'us-central1-c', 'us-central1-f', 'us-east1-c', 'us-east1-d']);
    expect(t4[0]).toMatchObject({ cloud: 'gcp', region: 'us-central1', instanceType: 'n1-standard-4', gpu: { model: 'T4', count: 1 }, pricePerHour: 0.54 });
    const h100 = await planned(d.provider, { vmName: 'x', gpu: { model: 'H100', count: 8 }, k8s: true, regions: ['us-central1'] });
    expect(h100.map((o) => `${o.zone}/${o.instanceType}`)).toEqual(['us-central1-a/a3-highgpu-8g', 'us-central1-b/a3-highgpu-8g']);
    const cpu = await planned(d.provider, { vmName: 'x', k8s: false, regions: ['us-east1'] });
    expect(cpu.map((o) => `${o.zone}/${o.instanceType}`)).toEqual(['us-east1-c/e2-small', 'us-east1-d/e2-small']);
    expect(await whyNothing(d.provider, { vmName: 'x', gpu: { model: 'B200', count: 3 }, k8s: false })).toMatch(/^no B200 here; GPUs here: T4, /);
    expect(await whyNothing(d.provider, { ...GCP_REQUEST, maxPricePerHour: 0.1 })).toContain('the cheapest is $0.54/h');
    // H100 comes as eight: the exact ask says so, the at-least ask plans it.
    expect(await whyNothing(d.provider, { vmName: 'x', gpu: { model: 'H100', count: 1 }, k8s: false, regions: ['us-central1'] })).toContain('H100:1+');
    expect((await planned(d.provider, { vmName: 'x', gpu: { model: 'H100', count: 1, atLeast: true }, k8s: false, regions: ['us-central1'] })).length).toBe(2);
  });

  it('creates with a deterministic requestId, labels, ssh-keys, user-data, GPU scheduling and a tagged firewall', async () => {
    const [offer] = await planned(d.provider, GCP_REQUEST);
    const spec = specFor('body-check', { openPorts: [22, 6443], bootScript: { script: 'echo hi', env: { A: '1' } } });
    const prepared = await d.provider.prepare(offer!, spec);
    const id = await d.provider.create(offer!, prepared, spec);
    const again = await d.provider.create(offer!, prepared, spec); // same requestId → same operation
    expect(again).toBe(id);
    expect(d.server.replayedInserts()).toBe(1);
    expect(d.server.inserts).toHaveLength(1);
    const body = d.server.inserts[0] as {
      name: string;
      labels: Record<string, string>;
      scheduling: { onHostMaintenance: string };
      tags: { items: string[] };
      guestAccelerators: { acceleratorType: string }[];
      metadata: { items: { key: string; value: string }[] };
    };
    const name = ownedName('body-check', 'conformance');
    expect(body.name).toBe(name);
    expect(body.labels).toEqual({ 'gpuprov-vm-name': 'body-check', 'gpuprov-owner': 'conformance' });
    expect(body.scheduling.onHostMaintenance).toBe('TERMINATE');
    expect(body.guestAccelerators[0]!.acceleratorType).toMatch(/zones\/us-central1-a\/acceleratorTypes\/nvidia-tesla-t4$/);
    const meta = Object.fromEntries(body.metadata.items.map((i) => [i.key, i.value]));
    expect(meta['ssh-keys']).toBe(`ubuntu:${spec.publicKeys[0]}`);
    expect(meta['user-data']).toMatch(/^#cloud-config\n/);
    expect(body.tags.items).toEqual([name]);
    const fw = d.server.firewalls.get(name)!;
    expect(fw.targetTags).toEqual([name]);
    expect(fw.allowed).toEqual([{ IPProtocol: 'tcp', ports: ['22', '6443'] }]);
    // A different attempt key with the name taken: 409 alreadyExists → adopt the same instance.
    const adopted = await d.provider.create(offer!, prepared, { ...spec, idempotencyKey: 'another-attempt' });
    expect(adopted).toBe(id);
    expect(d.server.instances.size).toBe(1);
    // Someone else's instance under our name is not adopted.
    d.server.instances.get(`us-central1-a/${name}`)!.labels['gpuprov-owner'] = 'other';
    await expect(d.provider.create(offer!, prepared, { ...spec, idempotencyKey: 'third' })).rejects.toMatchObject({ kind: 'InvalidRequest' });
    d.server.instances.get(`us-central1-a/${name}`)!.labels['gpuprov-owner'] = 'conformance';
    const at = { cloud: 'gcp', region: 'us-central1', zone: 'us-central1-a' };
    await d.provider.delete(at, spec.vmName, [id]);
    d.server.tick();
    d.server.tick();
    expect(await d.provider.observe(at, spec.vmName)).toEqual([]);
    await d.provider.cleanup(at, spec.vmName);
    expect(d.server.firewalls.size).toBe(0);
  });

  it('failover shape: an exhausted zone throws Capacity blocking the zone, the next zone succeeds', async () => {
    const [a, b] = await planned(d.provider, GCP_REQUEST);
    d.armZone(a!.zone!, 'exhausted');
    const spec = specFor('failover');
    const err = await d.provider.create(a!, await d.provider.prepare(a!, spec), spec).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'Capacity', block: 'zone', code: 'ZONE_RESOURCE_POOL_EXHAUSTED' });
    const live = await d.countLive();
    const id = await d.provider.create(b!, await d.provider.prepare(b!, spec), { ...spec, idempotencyKey: `${spec.idempotencyKey}-2` });
    expect(await d.countLive()).toBe(live + 1);
    const atB = { cloud: 'gcp', region: b!.region, zone: b!.zone! };
    expect((await d.provider.observe(atB, spec.vmName)).map((o) => o.id)).toEqual([id]);
    d.server.disarmZone(a!.zone!);
    await d.provider.delete(atB, spec.vmName, []);
  });

  it('quota errors block the region, or the whole cloud for GPUS_ALL_REGIONS', async () => {
    const [a] = await planned(d.provider, GCP_REQUEST);
    const spec = specFor('quota');
    const prepared = await d.provider.prepare(a!, spec);
    d.armZone(a!.zone!, 'quota');
    await expect(d.provider.create(a!, prepared, spec)).rejects.toMatchObject({ kind: 'Quota', block: 'region' });
    d.armZone(a!.zone!, 'quotaGlobal');
    await expect(d.provider.create(a!, prepared, { ...spec, idempotencyKey: 'q2' })).rejects.toMatchObject({ kind: 'Quota', block: 'cloud' });
    d.armZone(a!.zone!, {
      status: 429,
      body: {
        error: { code: 429, message: 'Rate Limit Exceeded', errors: [{ message: 'Rate Limit Exceeded', domain: 'usageLimits', reason: 'rateLimitExceeded' }] },
      },
      headers: { 'retry-after': '12' },
    });
    await expect(d.provider.create(a!, prepared, { ...spec, idempotencyKey: 'q3' })).rejects.toMatchObject({ kind: 'Transient', retryAfterMs: 12_000 });
    d.server.disarmZone(a!.zone!);
    expect(await d.provider.observe({ cloud: 'gcp', region: a!.region, zone: a!.zone! }, spec.vmName)).toEqual([]);
  });

  it('observe follows nextPageToken and maps TERMINATED to Stopped', async () => {
    const small = await startGcpDouble();
    try {
      for (const n of ['p1', 'p2']) small.server.seed('us-central1-b', `gpuprov-pg-${n}`, { 'gpuprov-vm-name': 'pg', 'gpuprov-owner': 'default' });
      small.server.seed('us-central1-b', 'gpuprov-pg-p3', { 'gpuprov-vm-name': 'pg', 'gpuprov-owner': 'default' }, 'TERMINATED');
      small.server.seed('us-central1-b', 'gpuprov-other', { 'gpuprov-vm-name': 'other' });
      const paged = new GcpProvider({ project: small.server.project, endpoint: small.server.url, pageSize: 2 });
      const at = { cloud: 'gcp', region: 'us-central1', zone: 'us-central1-b' };
      const seen = await paged.observe(at, 'pg');
      expect(seen.map((o) => o.status)).toEqual(['Running', 'Running', 'Stopped']);
      expect(seen[0]!.endpoint).toEqual({ host: '203.0.113.250', port: 22, user: 'ubuntu' });
      expect(seen[2]!.endpoint).toBeUndefined();
      expect(small.server.http.log.filter((r) => r.method === 'GET' && r.path.endsWith('/zones/us-central1-b/instances'))).toHaveLength(2);
      await paged.delete(at, 'pg', []);
      expect([...small.server.instances.values()].filter((i) => i.deleting > 0)).toHaveLength(3);
    } finally {
      await small.close();
    }
  });
});

describe('gcp fromEnv and credentials', () => {
  it('returns undefined without a project or without credentials', () => {
    expect(fromEnv({ HOME: '/nonexistent' })).toBeUndefined();
    expect(fromEnv({ HOME: '/nonexistent', GOOGLE_CLOUD_PROJECT: 'p' })).toBeUndefined();
    expect(fromEnv({ HOME: '/nonexistent', GCP_COMPUTE_ENDPOINT: 'http://127.0.0.1:9' })).toBeUndefined();
    expect(fromEnv({ HOME: '/nonexistent', GCLOUD_PROJECT: 'p', GOOGLE_APPLICATION_CREDENTIALS: '/nonexistent/sa.json' })).toBeInstanceOf(GcpProvider);
  });

  it('explicit construction without credentials throws Credentials naming the variable', () => {
    expect(() => new GcpProvider({})).toThrow(/GOOGLE_CLOUD_PROJECT/);
    const err = (() => {
      try {
        return new GcpProvider({ project: 'p' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toMatchObject({ kind: 'Credentials' });
    expect((err as Error).message).toMatch(/GOOGLE_APPLICATION_CREDENTIALS/);
  });
});
