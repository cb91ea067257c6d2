/**
 * GCP create waits on its insert operation within the attempt: a stockout or a quota error that
 * arrives late fails create with its kind and scope, not a "vanished while booting" later.
 * GPU offers boot a Deep Learning VM image (NVIDIA driver), CPU offers stock Ubuntu.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CPU_IMAGE, GPU_IMAGE } from '../../src/providers/gcp';
import { specFor } from './conformance';
import { GCP_REQUEST, startGcpDouble, type GcpDouble } from './gcp/double';
import { planned } from './planned';

describe('gcp insert operation', () => {
  let d: GcpDouble;
  beforeAll(async () => {
    d = await startGcpDouble();
  });
  afterAll(async () => {
    await d?.close();
  });

  const waits = (): number => d.server.http.log.filter((r) => r.method === 'POST' && r.path.endsWith('/wait')).length;

  it('a late ZONE_RESOURCE_POOL_EXHAUSTED fails create with Capacity/zone after waiting on the operation', async () => {
    const [a, b] = await planned(d.provider, GCP_REQUEST);
    const spec = specFor('late-cap');
    d.armZone(a!.zone!, 'exhausted', 3);
    const before = waits();
    await expect(d.provider.create(a!, await d.provider.prepare(a!, spec), spec)).rejects.toMatchObject({
      kind: 'Capacity',
      block: 'zone',
      code: 'ZONE_RESOURCE_POOL_EXHAUSTED',
    });
    expect(waits() - before).toBe(4); // three RUNNING answers, then DONE with the error
    expect(await d.provider.observe({ cloud: 'gcp', region: a!.region, zone: a!.zone! }, spec.vmName)).toEqual([]);
    d.server.disarmZone(a!.zone!);
    const id = await d.provider.create(b!, await d.provider.prepare(b!, spec), { ...spec, idempotencyKey: `${spec.idempotencyKey}-2` });
    expect(id).toMatch(/^\d+$/);
    await d.provider.delete({ cloud: 'gcp', region: b!.region, zone: b!.zone! }, spec.vmName, [id]);
  });

  it('late WITH_DETAILS stockouts are Capacity/zone; late quota errors are Quota/region (cloud for GPUS_ALL_REGIONS)', async () => {
    const [a] = await planned(d.provider, GCP_REQUEST);
    const spec = specFor('late-quota');
    const prepared = await d.provider.prepare(a!, spec);
    d.armZone(a!.zone!, 'exhaustedWithDetails', 2);
    await expect(d.provider.create(a!, prepared, spec)).rejects.toMatchObject({
      kind: 'Capacity',
      block: 'zone',
      code: 'ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS',
    });
    d.armZone(a!.zone!, 'quota', 2);
    await expect(d.provider.create(a!, prepared, { ...spec, idempotencyKey: 'lq2' })).rejects.toMatchObject({
      kind: 'Quota',
      block: 'region',
      code: 'QUOTA_EXCEEDED',
    });
    d.armZone(a!.zone!, 'quotaGlobal', 2);
    await expect(d.provider.create(a!, prepared, { ...spec, idempotencyKey: 'lq3' })).rejects.toMatchObject({ kind: 'Quota', block: 'cloud' });
    d.server.disarmZone(a!.zone!);
  });

  it('the wait is bounded: an operation still RUNNING after every wait returns the instance id', async () => {
    const [a] = await planned(d.provider, GCP_REQUEST);
    const spec = specFor('slow-op');
    d.armZone(a!.zone!, 'exhausted', 1_000);
    const before = waits();
    const id = await d.provider.create(a!, await d.provider.prepare(a!, spec), spec);
    expect(id).toMatch(/^\d+$/);
    expect(waits() - before).toBeLessThanOrEqual(8);
    expect(d.server.http.log.filter((r) => r.method === 'GET' && r.path.includes('/operations/')).length).toBeGreaterThan(0);
    d.server.disarmZone(a!.zone!);
    await d.provider.delete({ cloud: 'gcp', region: a!.region, zone: a!.zone! }, spec.vmName, [id]);
  });

  it('GPU offers boot the Deep Learning VM family (NVIDIA driver); CPU offers stock Ubuntu', async () => {
    const [gpu] = await planned(d.provider, GCP_REQUEST);
    const [cpu] = await planned(d.provider, { vmName: 'x', k8s: false });
    const family = (r: { method: string; path: string }): boolean => r.method === 'GET' && r.path.includes('/global/images/family/');
    const n = d.server.http.log.filter(family).length;
    const g = (await d.provider.prepare(gpu!, specFor('img-gpu'))) as { image: string };
    const c = (await d.provider.prepare(cpu!, specFor('img-cpu'))) as { image: string };
    const asked = d.server.http.log
      .filter(family)
      .slice(n)
      .map((r) => r.path.replace(/^.*\/projects\//, ''));
    expect(asked).toEqual([`${GPU_IMAGE.project}/global/images/family/${GPU_IMAGE.family}`, `${CPU_IMAGE.project}/global/images/family/${CPU_IMAGE.family}`]);
    expect(GPU_IMAGE).toEqual({ project: 'deeplearning-platform-release', family: 'common-cu128-ubuntu-2204-nvidia-570' });
    expect(g.image).toContain('/projects/deeplearning-platform-release/global/images/common-cu128-ubuntu-2204-nvidia-570-');
    expect(c.image).toContain('/projects/ubuntu-os-cloud/global/images/ubuntu-2204-');
    const spec = specFor('img-gpu');
    await d.provider.create(gpu!, g, spec);
    const body = d.server.inserts.at(-1) as { disks: { initializeParams: { sourceImage: string } }[]; metadata: { items: { key: string; value: string }[] } };
    expect(body.disks[0]!.initializeParams.sourceImage).toBe(g.image);
    expect(body.metadata.items).toContainEqual({ key: 'install-nvidia-driver', value: 'True' });
    await d.provider.delete({ cloud: 'gcp', region: gpu!.region, zone: gpu!.zone! }, spec.vmName, []);
  });
});
