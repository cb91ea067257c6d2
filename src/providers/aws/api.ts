/**
 * The EC2 calls the adapter makes, one method per API call, each with its response schema. How
 * a call is sent (the deferred SDK, per-region clients, pagination, redacted errors) is in
 * ./ec2-transport.ts.
 */
import type { Filter, RunInstancesCommandInput, Tag } from '@aws-sdk/client-ec2';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { IDENTITY_TAG, OWNER_TAG } from '../../core/provider';
import type { ImageFamily } from './catalog';
import { Ec2Transport, type Ec2ApiOptions } from './ec2-transport';
import type { Ec2Instance } from './map';
import { ReservedApi } from './reserved-api';
import { SpotApi } from './spot-api';

export type { Ec2ApiOptions } from './ec2-transport';

/** Image lookups by family: newest available x86_64 image whose name matches. */
export const IMAGE_FAMILIES: Readonly<Record<ImageFamily, { owners: string[]; name: string }>> = {
  gpu: { owners: ['amazon'], name: 'Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) *' },
  cpu: { owners: ['099720109477'], name: 'ubuntu/images/hvm-ssd*/ubuntu-jammy-22.04-amd64-server-*' },
};

const Tags = z.array(z.object({ Key: z.string().optional(), Value: z.string().optional() })).optional();
const Offerings = z.object({
  InstanceTypeOfferings: z.array(z.object({ InstanceType: z.string(), Location: z.string() })).default([]),
  NextToken: z.string().optional(),
});
const Vpcs = z.object({ Vpcs: z.array(z.object({ VpcId: z.string() })).default([]) });
const Subnets = z.object({
  Subnets: z.array(z.object({ SubnetId: z.string(), AvailabilityZone: z.string() })).default([]),
  NextToken: z.string().optional(),
});
const Permission = z.object({ IpProtocol: z.string().optional(), FromPort: z.number().optional(), ToPort: z.number().optional() });
const Groups = z.object({ SecurityGroups: z.array(z.object({ GroupId: z.string(), IpPermissions: z.array(Permission).default([]), Tags })).default([]) });
const CreatedGroup = z.object({ GroupId: z.string() });
const Images = z.object({
  Images: z
    .array(z.object({ ImageId: z.string(), Name: z.string().optional(), CreationDate: z.string().optional(), RootDeviceName: z.string().optional() }))
    .default([]),
  NextToken: z.string().optional(),
});
const Instance = z.object({
  InstanceId: z.string(),
  InstanceType: z.string().optional(),
  State: z.object({ Name: z.string() }),
  StateReason: z.object({ Code: z.string().optional(), Message: z.string().optional() }).optional(),
  StateTransitionReason: z.string().optional(),
  PublicIpAddress: z.string().optional(),
  PublicDnsName: z.string().optional(),
  PrivateIpAddress: z.string().optional(),
  Placement: z.object({ AvailabilityZone: z.string().optional() }).optional(),
  InstanceLifecycle: z.string().optional(),
  SpotInstanceRequestId: z.string().optional(),
  CpuOptions: z.object({ CoreCount: z.number().optional(), ThreadsPerCore: z.number().optional() }).optional(),
  Tags,
});
const Reservations = z.object({
  Reservations: z.array(z.object({ Instances: z.array(Instance).default([]) })).default([]),
  NextToken: z.string().optional(),
});
const Launched = z.object({ Instances: z.array(z.object({ InstanceId: z.string() })).min(1) });
/** The only code that calls EC2. One method per API call (plus its pagination); no retries. */
export class Ec2Api {
  private readonly ec2: Ec2Transport;
  /** The spot market's calls (DescribeSpotPriceHistory, DescribeSpotInstanceRequests). */
  readonly spot: SpotApi;
  /** Reserved capacity's calls (DescribeCapacityReservations, DescribeCapacityBlockOfferings, PurchaseCapacityBlock). */
  readonly reserved: ReservedApi;

  constructor(opts: Ec2ApiOptions) {
    this.ec2 = new Ec2Transport(opts);
    this.spot = new SpotApi(this.ec2);
    this.reserved = new ReservedApi(this.ec2);
  }

  /** Instance types among `types` offered at `locationType` granularity; `location` is the region or AZ. */
  async typeOfferings(region: string, types: string[], locationType: 'region' | 'availability-zone'): Promise<{ instanceType: string; location: string }[]> {
    return this.ec2.pages(
      region,
      'DescribeInstanceTypeOfferings',
      Offerings,
      (c, { DescribeInstanceTypeOfferingsCommand }, NextToken) =>
        c.send(
          new DescribeInstanceTypeOfferingsCommand({
            LocationType: locationType,
            Filters: [{ Name: 'instance-type', Values: types }],
            MaxResults: Math.max(5, this.ec2.pageSize),
            NextToken,
          }),
        ),
      (page) => page.InstanceTypeOfferings.map((o) => ({ instanceType: o.InstanceType, location: o.Location })),
    );
  }

  async defaultVpcId(region: string): Promise<string | undefined> {
    const out = await this.ec2.call(region, 'DescribeVpcs', Vpcs, (c, { DescribeVpcsCommand }) =>
      c.send(new DescribeVpcsCommand({ Filters: [{ Name: 'is-default', Values: ['true'] }] })),
    );
    return out.Vpcs[0]?.VpcId;
  }

  /** The default subnet of each AZ of the VPC. */
  async defaultSubnets(region: string, vpcId: string): Promise<{ subnetId: string; zone: string }[]> {
    return this.ec2.pages(
      region,
      'DescribeSubnets',
      Subnets,
      (c, { DescribeSubnetsCommand }, NextToken) =>
        c.send(
          new DescribeSubnetsCommand({
            Filters: [
              { Name: 'vpc-id', Values: [vpcId] },
              { Name: 'default-for-az', Values: ['true'] },
            ],
            MaxResults: Math.max(5, this.ec2.pageSize),
            NextToken,
          }),
        ),
      (page) => page.Subnets.map((s) => ({ subnetId: s.SubnetId, zone: s.AvailabilityZone })),
    );
  }

  /** The security group named `name` in the VPC, with the single TCP ports it already allows. */
  async findSecurityGroup(region: string, vpcId: string, name: string): Promise<{ groupId: string; tcpPorts: number[] } | undefined> {
    const out = await this.ec2.call(region, 'DescribeSecurityGroups', Groups, (c, { DescribeSecurityGroupsCommand }) =>
      c.send(
        new DescribeSecurityGroupsCommand({
          Filters: [
            { Name: 'vpc-id', Values: [vpcId] },
            { Name: 'group-name', Values: [name] },
          ],
        }),
      ),
    );
    const g = out.SecurityGroups[0];
    if (!g) return undefined;
    const tcpPorts = g.IpPermissions.filter((p) => p.IpProtocol === 'tcp' && p.FromPort !== undefined && p.FromPort === p.ToPort).map((p) => p.FromPort!);
    return { groupId: g.GroupId, tcpPorts };
  }

  /** Security groups named `name` and tagged with the VM's identity and deployment, in any VPC of the region. */
  async securityGroupIdsByName(region: string, name: string, vmName: string, deployment: string): Promise<string[]> {
    const out = await this.ec2.call(region, 'DescribeSecurityGroups', Groups, (c, { DescribeSecurityGroupsCommand }) =>
      c.send(
        new DescribeSecurityGroupsCommand({
          Filters: [
            { Name: 'group-name', Values: [name] },
            { Name: `tag:${IDENTITY_TAG}`, Values: [vmName] },
            { Name: `tag:${OWNER_TAG}`, Values: [deployment] },
          ],
        }),
      ),
    );
    return out.SecurityGroups.map((g) => g.GroupId);
  }

  /** Every security group of `deployment` in the region that carries a VM identity tag (paginated). */
  async ownedSecurityGroups(region: string, deployment: string): Promise<{ groupId: string; vmName: string }[]> {
    return this.ec2.pages(
      region,
      'DescribeSecurityGroups',
      Groups.extend({ NextToken: z.string().nullish() }),
      (c, { DescribeSecurityGroupsCommand }, NextToken) =>
        c.send(
          new DescribeSecurityGroupsCommand({
            Filters: [
              { Name: `tag:${OWNER_TAG}`, Values: [deployment] },
              { Name: 'tag-key', Values: [IDENTITY_TAG] },
            ],
            ...(NextToken ? { NextToken } : {}),
          }),
        ),
      (page) =>
        page.SecurityGroups.flatMap((g) => {
          const vmName = g.Tags?.find((t) => t.Key === IDENTITY_TAG)?.Value;
          return vmName ? [{ groupId: g.GroupId, vmName }] : [];
        }),
    );
  }

  async createSecurityGroup(region: string, vpcId: string, name: string, description: string, tags: Tag[]): Promise<string> {
    const out = await this.ec2.call(region, 'CreateSecurityGroup', CreatedGroup, (c, { CreateSecurityGroupCommand }) =>
      c.send(
        new CreateSecurityGroupCommand({
          GroupName: name,
          Description: description,
          VpcId: vpcId,
          TagSpecifications: [{ ResourceType: 'security-group', Tags: tags }],
        }),
      ),
    );
    return out.GroupId;
  }

  /** Allow inbound TCP on `ports` from anywhere; a rule that already exists is success. */
  async allowTcp(region: string, groupId: string, ports: number[]): Promise<void> {
    if (ports.length === 0) return;
    try {
      await this.ec2.call(region, 'AuthorizeSecurityGroupIngress', z.unknown(), (c, { AuthorizeSecurityGroupIngressCommand }) =>
        c.send(
          new AuthorizeSecurityGroupIngressCommand({
            GroupId: groupId,
            IpPermissions: ports.map((p) => ({
              IpProtocol: 'tcp',
              FromPort: p,
              ToPort: p,
              IpRanges: [{ CidrIp: '0.0.0.0/0' }],
              Ipv6Ranges: [{ CidrIpv6: '::/0' }],
            })),
          }),
        ),
      );
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'InvalidPermission.Duplicate') return;
      throw err;
    }
  }

  /** One image by id with its root device (for a root volume size), or undefined when the region has no such image. */
  async imageById(region: string, imageId: string): Promise<{ imageId: string; rootDevice?: string } | undefined> {
    let page;
    try {
      page = await this.ec2.call(region, 'DescribeImages', Images, (c, { DescribeImagesCommand }) =>
        c.send(new DescribeImagesCommand({ ImageIds: [imageId] })),
      );
    } catch (err) {
      if (err instanceof ProviderError && err.code?.startsWith('InvalidAMIID')) return undefined;
      throw err;
    }
    const img = page.Images.find((i) => i.ImageId === imageId);
    return img ? { imageId: img.ImageId, ...(img.RootDeviceName ? { rootDevice: img.RootDeviceName } : {}) } : undefined;
  }

  /** Newest available x86_64 image of the family, by CreationDate. */
  async newestImage(region: string, family: ImageFamily): Promise<{ imageId: string; name?: string; rootDevice?: string } | undefined> {
    const f = IMAGE_FAMILIES[family];
    const filters: Filter[] = [
      { Name: 'name', Values: [f.name] },
      { Name: 'state', Values: ['available'] },
      { Name: 'architecture', Values: ['x86_64'] },
    ];
    const images = await this.ec2.pages(
      region,
      'DescribeImages',
      Images,
      (c, { DescribeImagesCommand }, NextToken) => c.send(new DescribeImagesCommand({ Owners: f.owners, Filters: filters, NextToken })),
      (page) => page.Images,
    );
    let best: (typeof images)[number] | undefined;
    for (const img of images) if (!best || (img.CreationDate ?? '') > (best.CreationDate ?? '')) best = img;
    return best
      ? { imageId: best.ImageId, ...(best.Name ? { name: best.Name } : {}), ...(best.RootDeviceName ? { rootDevice: best.RootDeviceName } : {}) }
      : undefined;
  }

  async runInstance(region: string, input: RunInstancesCommandInput): Promise<string> {
    const out = await this.ec2.call(region, 'RunInstances', Launched, (c, { RunInstancesCommand }) => c.send(new RunInstancesCommand(input)));
    return out.Instances[0]!.InstanceId;
  }

  /** Instances matching the filters, every page. */
  async describeInstances(region: string, filters: Filter[]): Promise<Ec2Instance[]> {
    return this.ec2.pages(
      region,
      'DescribeInstances',
      Reservations,
      (c, { DescribeInstancesCommand }, NextToken) =>
        c.send(new DescribeInstancesCommand({ Filters: filters, MaxResults: Math.max(5, this.ec2.pageSize), NextToken })),
      (page) => page.Reservations.flatMap((r) => r.Instances),
    );
  }

  /** TerminateInstances; EC2 already treats terminating a terminated instance as success. */
  async terminate(region: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.ec2.call(region, 'TerminateInstances', z.unknown(), (c, { TerminateInstancesCommand }) =>
      c.send(new TerminateInstancesCommand({ InstanceIds: ids })),
    );
  }

  async deleteSecurityGroup(region: string, groupId: string): Promise<void> {
    await this.ec2.call(region, 'DeleteSecurityGroup', z.unknown(), (c, { DeleteSecurityGroupCommand }) =>
      c.send(new DeleteSecurityGroupCommand({ GroupId: groupId })),
    );
  }
}
