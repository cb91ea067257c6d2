/**
 * AWS adapter specifics against moto: the plan ladder and region offerings, prepare's
 * security group / subnets / image, create's tags, user-data, ClientToken and AZ failover,
 * observe pagination, delete and cleanup edge cases.
 */
import { ownedName } from '../../../src/providers/deployment';
import { DescribeInstanceAttributeCommand, DescribeSecurityGroupsCommand, DescribeVolumesCommand, RunInstancesCommand } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCloudInit } from '../../../src/providers/cloud-init';
import type { Offer } from '../../../src/core/provider';
import { locationOf, specFor } from '../conformance';
import { motoMissing } from '../../harness/moto';
import { REGION, startAwsDouble, type AwsDouble } from './double';
import { failure } from './failure';
import { planned, whyNothing } from '../planned';

describe.skipIf(motoMissing())('aws adapter on moto', () => {
  let d: AwsDouble;
  let cpu: Offer;

  beforeAll(async () => {
    d = await startAwsDouble();
    cpu = (await planned(d.provider, { vmName: 'x', k8s: false }))[0]!;
  });
  afterAll(async () => {
    await d?.close();
  });

  describe('plan', () => {
    it('walks the GPU ladder: exact counts by price, N+ from the smallest count up, with the catalog price', async () => {
      const offers = await planned(d.provider, { vmName: 'x', gpu: { model: 'T4', count: 1 }, k8s: false });
      expect(offers.map((o) => o.instanceType)).toEqual(['g4dn.xlarge', 'g4dn.2xlarge']);
      expect(offers[0]).toMatchObject({
        cloud: 'aws',
        region: REGION,
        gpu: { model: 'T4', count: 1 },
        pricePerHour: 0.526,
        currency: 'USD',
        extra: { image: 'gpu' },
      });
      const atLeast = await planned(d.provider, { vmName: 'x', gpu: { model: 'T4', count: 1, atLeast: true }, k8s: false });
      expect(atLeast.map((o) => o.instanceType)).toEqual(['g4dn.xlarge', 'g4dn.2xlarge', 'g4dn.12xlarge', 'g4dn.metal']);
      expect(await planned(d.provider, { vmName: 'x', gpu: { model: 'h100', count: 2 }, k8s: false })).toEqual([]);
      const h100 = await planned(d.provider, { vmName: 'x', gpu: { model: 'h100', count: 2, atLeast: true }, k8s: false });
      expect(h100.map((o) => o.instanceType)).toEqual(['p5.48xlarge']);
    });

    it('CPU-only requests get the t3 types, cheapest first', async () => {
      const offers = await planned(d.provider, { vmName: 'x', k8s: false });
      expect(offers.map((o) => o.instanceType)).toEqual(['t3.micro', 't3.small']);
      expect(offers[0]!.gpu).toBeUndefined();
    });

    it('unplannable requests plan nothing, and the reason names the GPU and what exists', async () => {
      const why = (req: Omit<Parameters<typeof planned>[1], 'vmName' | 'k8s'>): Promise<string | undefined> =>
        whyNothing(d.provider, { vmName: 'x', k8s: false, ...req });
      expect(await why({ gpu: { model: 'X100', count: 1 } })).toMatch(/^no X100 here; GPUs here: T4, .*H100/);
      expect(await why({ gpu: { model: 'H100', count: 1 } })).toBe(
        'no offer has exactly 1 H100; GPU counts here: 8 (p5.48xlarge); ask --gpu H100:8, or H100:1+ for at least 1',
      );
      expect(await why({ gpu: { model: 'H100', count: 16 } })).toContain('GPU counts here: 8 (p5.48xlarge)');
      // moto (like AWS today) lists no p3 in us-east-1: the V100 ladder is not offered here.
      expect(await why({ gpu: { model: 'V100', count: 1 } })).toMatch(/^no V100 here/);
      expect(await why({ gpu: { model: 'H100', count: 8 }, maxPricePerHour: 10 })).toContain('the cheapest is $55.04/h');
      expect(await why({ gpu: { model: 'T4', count: 1 }, instanceTypes: ['p5.48xlarge'] })).toBe('no T4 in the asked types; GPUs there: H100');
    });
  });

  describe('plan across regions', () => {
    let multi: AwsDouble;
    beforeAll(async () => {
      multi = await startAwsDouble({}, false);
    });
    afterAll(async () => {
      await multi?.close();
    });

    it('keeps only types offered in each region (DescribeInstanceTypeOfferings)', async () => {
      // moto's offering data: no g5 in us-west-1, g5 in us-west-2.
      const offers = await planned(multi.provider, { vmName: 'x', gpu: { model: 'A10G', count: 1 }, regions: ['us-west-1', 'us-west-2'], k8s: false });
      expect(offers.length).toBeGreaterThan(0);
      expect(new Set(offers.map((o) => o.region))).toEqual(new Set(['us-west-2']));
      const call = multi.sent.filter((s) => s.command === 'DescribeInstanceTypeOfferings').at(-1)!;
      expect(call.input.LocationType).toBe('region');
    });

    it('AWS_REGIONS configures the regions', async () => {
      const p = multi.makeProvider({ regions: undefined, env: { AWS_REGIONS: 'us-east-2, us-west-2' } });
      const offers = await planned(p, { vmName: 'x', k8s: false });
      expect(offers.map((o) => `${o.instanceType}@${o.region}`)).toEqual([
        't3.micro@us-east-2',
        't3.micro@us-west-2',
        't3.small@us-east-2',
        't3.small@us-west-2',
      ]);
    });
  });

  describe('prepare', () => {
    it('finds-or-creates a tagged per-VM security group with SSH only, default subnets in AZ order, newest Ubuntu 22.04', async () => {
      const spec = specFor('prep1');
      const a = (await d.provider.prepare(cpu, spec)) as { securityGroupId: string; subnetIds: string[]; imageId: string };
      const b = await d.provider.prepare(cpu, spec);
      expect(b).toEqual(a);
      expect(a.imageId).toBe('ami-0a1b2c3d4e5f60002'); // newest jammy amd64, not the arm64 or focal decoys
      const groups = await d.ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'group-name', Values: [ownedName('prep1', 'conformance')] }] }));
      expect(groups.SecurityGroups).toHaveLength(1);
      const g = groups.SecurityGroups![0]!;
      expect(g.GroupId).toBe(a.securityGroupId);
      expect(g.Tags).toEqual(
        expect.arrayContaining([
          { Key: 'gpuprov-vm-name', Value: 'prep1' },
          { Key: 'gpuprov-owner', Value: 'conformance' },
        ]),
      );
      expect((g.IpPermissions ?? []).map((p) => p.FromPort)).toEqual([22]);
      // t3.micro is not offered in us-east-1e (moto data): five subnets, a..f without e.
      const subnets = d.sent.filter((s) => s.command === 'DescribeSubnets');
      expect(subnets.length).toBeGreaterThan(0);
      expect(a.subnetIds).toHaveLength(5);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
    });

    it('opens 6443 only when asked, and adds it to an existing group', async () => {
      const spec = specFor('prep2');
      await d.provider.prepare(cpu, spec);
      const withK8s = await d.provider.prepare(cpu, { ...spec, openPorts: [22, 6443] });
      const groups = await d.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [(withK8s as { securityGroupId: string }).securityGroupId] }));
      expect((groups.SecurityGroups![0]!.IpPermissions ?? []).map((p) => p.FromPort).sort()).toEqual([22, 6443]);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
    });

    it('GPU offers get the newest Deep Learning Ubuntu 22.04 AMI; AWS_AMI_ID overrides', async () => {
      const gpu = (await planned(d.provider, { vmName: 'x', gpu: { model: 'L4', count: 1 }, k8s: false }))[0]!;
      const spec = specFor('prep3');
      expect(((await d.provider.prepare(gpu, spec)) as { imageId: string }).imageId).toBe('ami-0d1e2a3b4c5d60012');
      const pinned = d.makeProvider({ env: { AWS_AMI_ID: 'ami-0a1b2c3d4e5f60001' } });
      expect(((await pinned.prepare(gpu, spec)) as { imageId: string }).imageId).toBe('ami-0a1b2c3d4e5f60001');
      await d.provider.cleanup(locationOf(gpu), spec.vmName);
    });
  });

  describe('create', () => {
    it('tags instance and volume, passes cloud-init with the SSH keys, and a 64-char ClientToken', async () => {
      const spec = specFor('tags', { bootScript: { script: 'echo hi', env: { A: '1' } } });
      const prepared = await d.provider.prepare(cpu, spec);
      const id = await d.provider.create(cpu, prepared, spec);
      const run = d.sent.filter((s) => s.command === 'RunInstances').at(-1)!;
      expect(run.input.ClientToken).toMatch(/^[0-9a-f]{64}$/);
      const userData = await d.ec2.send(new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: 'userData' }));
      expect(Buffer.from(userData.UserData!.Value!, 'base64').toString('utf8')).toBe(renderCloudInit(spec.bootScript, spec.publicKeys));
      const vols = await d.ec2.send(new DescribeVolumesCommand({ Filters: [{ Name: 'tag:gpuprov-vm-name', Values: ['tags'] }] }));
      expect(vols.Volumes?.length).toBeGreaterThan(0);
      const [obs] = await d.provider.observe(locationOf(cpu), 'tags');
      expect(obs).toMatchObject({ id, instanceType: 't3.micro', endpoint: { port: 22, user: 'ubuntu' } });
      await d.provider.delete(locationOf(cpu), spec.vmName, [id]);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
    });

    it('the same ClientToken twice yields one instance, even when the first response was lost', async () => {
      const spec = specFor('token');
      const live0 = await d.countLive();
      const prepared = await d.provider.prepare(cpu, spec);
      d.armLostResponse('RunInstances');
      const lost = await failure(d.provider.create(cpu, prepared, spec));
      expect(lost.kind).toBe('Transient');
      expect(await d.countLive()).toBe(live0 + 1); // the instance exists although create failed
      const runs0 = d.sent.filter((s) => s.command === 'RunInstances').length;
      const id = await d.provider.create(cpu, prepared, spec);
      const again = await d.provider.create(cpu, prepared, spec);
      expect(again).toBe(id);
      expect(await d.countLive()).toBe(live0 + 1);
      expect(d.sent.filter((s) => s.command === 'RunInstances').length).toBe(runs0); // found by its idempotency tag
      await d.provider.delete(locationOf(cpu), spec.vmName, []);
      expect(await d.countLive()).toBe(live0);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
    });

    it('a capacity error in one AZ tries the next subnet within the same call', async () => {
      const spec = specFor('azhop');
      const prepared = (await d.provider.prepare(cpu, spec)) as { subnetIds: string[] };
      d.armCode('RunInstances', 'InsufficientInstanceCapacity');
      const id = await d.provider.create(cpu, prepared, spec);
      const runs = d.sent.filter((s) => s.command === 'RunInstances').slice(-2);
      expect(runs.map((r) => r.input.SubnetId)).toEqual(prepared.subnetIds.slice(0, 2));
      expect(runs[0]!.input.ClientToken).not.toBe(runs[1]!.input.ClientToken);
      const [obs] = await d.provider.observe(locationOf(cpu), spec.vmName);
      expect(obs).toMatchObject({ id, location: { zone: 'us-east-1b' } });
      await d.provider.delete(locationOf(cpu), spec.vmName, [id]);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
    });

    it('every AZ failing: Capacity wins over Unsupported; all Unsupported blocks the type in the region; Quota stops at once', async () => {
      const spec = specFor('azfail');
      const prepared = (await d.provider.prepare(cpu, spec)) as { subnetIds: string[] };
      d.armCode('RunInstances', 'Unsupported');
      d.armCode('RunInstances', 'InsufficientInstanceCapacity', { sticky: true });
      const cap = await failure(d.provider.create(cpu, prepared, spec));
      expect([cap.kind, cap.code]).toEqual(['Capacity', 'InsufficientInstanceCapacity']);
      d.armCode('RunInstances', 'Unsupported', { sticky: true });
      const uns = await failure(d.provider.create(cpu, prepared, spec));
      expect([uns.kind, uns.block]).toEqual(['Unavailable', 'type-in-region']);
      const before = d.sent.filter((s) => s.command === 'RunInstances').length;
      d.armCode('RunInstances', 'VcpuLimitExceeded');
      const quota = await failure(d.provider.create(cpu, prepared, spec));
      expect([quota.kind, quota.block]).toEqual(['Quota', 'region']);
      expect(d.sent.filter((s) => s.command === 'RunInstances').length).toBe(before + 1);
      expect(await d.provider.observe(locationOf(cpu), spec.vmName)).toEqual([]);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
    });

    it('rejects prepared data that prepare did not make', async () => {
      expect((await failure(d.provider.create(cpu, { nope: true }, specFor('bad')))).kind).toBe('InvalidRequest');
    });
  });

  describe('observe, delete, cleanup', () => {
    it('observe pages through DescribeInstances', async () => {
      const small = d.makeProvider({ pageSize: 5 });
      const spec = specFor('many');
      const prepared = (await d.provider.prepare(cpu, spec)) as { imageId: string };
      for (let i = 0; i < 7; i++) {
        await d.ec2.send(
          new RunInstancesCommand({
            ImageId: prepared.imageId,
            InstanceType: 't3.micro',
            MinCount: 1,
            MaxCount: 1,
            TagSpecifications: [
              {
                ResourceType: 'instance',
                Tags: [
                  { Key: 'gpuprov-vm-name', Value: 'many' },
                  { Key: 'gpuprov-owner', Value: 'conformance' },
                ],
              },
            ],
          }),
        );
      }
      const pages0 = d.sent.filter((s) => s.command === 'DescribeInstances').length;
      const found = await small.observe(locationOf(cpu), 'many');
      expect(found).toHaveLength(7);
      const pages = d.sent.filter((s) => s.command === 'DescribeInstances').slice(pages0);
      expect(pages.length).toBeGreaterThanOrEqual(2);
      expect(pages[1]!.input.NextToken).toBeTruthy();
      await small.delete(locationOf(cpu), 'many', ['i-0000000000000dead']);
      expect(await small.observe(locationOf(cpu), 'many')).toEqual([]);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
    });

    it('AWS_USE_PRIVATE_IP=1 gives the private address', async () => {
      const spec = specFor('priv');
      const id = await d.provider.create(cpu, await d.provider.prepare(cpu, spec), spec);
      const priv = d.makeProvider({ env: { AWS_USE_PRIVATE_IP: '1' } });
      const [o] = await priv.observe(locationOf(cpu), 'priv');
      expect(o?.endpoint?.host).toMatch(/^172\.31\./);
      const [pub] = await d.provider.observe(locationOf(cpu), 'priv');
      expect(pub?.endpoint?.host).not.toBe(o?.endpoint?.host);
      await d.provider.delete(locationOf(cpu), 'priv', [id]);
      await d.provider.cleanup(locationOf(cpu), 'priv');
    });

    it('cleanup: DependencyViolation is Transient, InvalidGroup.NotFound is success', async () => {
      const spec = specFor('sgdel');
      await d.provider.prepare(cpu, spec);
      d.armCode('DeleteSecurityGroup', 'DependencyViolation');
      const busy = await failure(d.provider.cleanup(locationOf(cpu), spec.vmName));
      expect([busy.kind, busy.code]).toEqual(['Transient', 'DependencyViolation']);
      d.armCode('DeleteSecurityGroup', 'InvalidGroup.NotFound');
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
      await d.provider.cleanup(locationOf(cpu), spec.vmName);
      const groups = await d.ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'group-name', Values: [ownedName('sgdel', 'conformance')] }] }));
      expect(groups.SecurityGroups).toEqual([]);
    });

    it('delete: InvalidInstanceID.NotFound for given ids is success', async () => {
      d.armCode('TerminateInstances', 'InvalidInstanceID.NotFound');
      await d.provider.delete(locationOf(cpu), 'nobody', ['i-0123456789abcdef0']);
    });
  });
});
