/**
 * `prepare` of the AWS adapter: the default VPC's subnets in the zones offering the type, the
 * per-VM security group with the VM's ports open, and the image (`--image`, AWS_AMI_ID, or the
 * newest of its family). What it returns (`Prepared`) is what `create` launches with.
 */
import type { Tag } from '@aws-sdk/client-ec2';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { IDENTITY_TAG, OWNER_TAG, identityName, type InstanceSpec, type Json, type Offer } from '../../core/provider';
import { ownedName } from '../deployment';
import type { Ec2Api } from './api';
import { imageFamilyOf } from './map';

/** What `prepareLaunch` needs of the adapter. */
export interface PrepareContext {
  api: Ec2Api;
  deployment: string;
  /** AWS_AMI_ID, if set. */
  amiId: string | undefined;
}

export const Prepared = z.object({
  securityGroupId: z.string(),
  subnetIds: z.array(z.string()).min(1),
  imageId: z.string(),
  /** Set with `spec.diskGb`: the root volume's device and size. */
  rootVolume: z.object({ device: z.string(), sizeGb: z.number() }).optional(),
});

/** The identity tags of every resource made for a VM: its name, its identity and the deployment. */
export function ownerTags(vmName: string, deployment: string): Tag[] {
  return [
    { Key: 'Name', Value: identityName(vmName) },
    { Key: IDENTITY_TAG, Value: vmName },
    { Key: OWNER_TAG, Value: deployment },
  ];
}

/** Default VPC subnets (AZs offering the type, in AZ order), the per-VM security group, the image. */
export async function prepareLaunch(ctx: PrepareContext, offer: Offer, spec: InstanceSpec): Promise<Json> {
  const { api, deployment } = ctx;
  const region = offer.region;
  const vpcId = await api.defaultVpcId(region);
  if (!vpcId) {
    throw new ProviderError(
      'InvalidRequest',
      `AWS region ${region} has no default VPC; create one (aws ec2 create-default-vpc --region ${region}) or drop the region`,
    );
  }
  const [subnets, inZones] = await Promise.all([api.defaultSubnets(region, vpcId), api.typeOfferings(region, [offer.instanceType], 'availability-zone')]);
  const zones = new Set(inZones.map((o) => o.location));
  const usable = subnets.filter((s) => zones.has(s.zone) && (offer.zone === undefined || s.zone === offer.zone)).sort((a, b) => a.zone.localeCompare(b.zone));
  if (usable.length === 0) {
    throw new ProviderError('Unavailable', `AWS ${region}: no default subnet in an availability zone that offers ${offer.instanceType}`, {
      block: 'type-in-region',
    });
  }

  const groupName = ownedName(spec.vmName, deployment);
  const ports = [...new Set([22, ...spec.openPorts])].sort((a, b) => a - b);
  const found = await api.findSecurityGroup(region, vpcId, groupName);
  const groupId =
    found?.groupId ??
    (await api.createSecurityGroup(region, vpcId, groupName, `gpuprov VM ${spec.vmName}: inbound TCP ${ports.join(',')}`, ownerTags(spec.vmName, deployment)));
  await api.allowTcp(
    region,
    groupId,
    ports.filter((p) => !found?.tcpPorts.includes(p)),
  );

  const image = await imageFor(ctx, region, offer, spec);
  return {
    securityGroupId: groupId,
    subnetIds: usable.map((s) => s.subnetId),
    imageId: image.imageId,
    ...(spec.diskGb !== undefined ? { rootVolume: { device: image.rootDevice ?? '/dev/sda1', sizeGb: spec.diskGb } } : {}),
  };
}

/**
 * The user's AMI (`--image`, looked up: AMIs are per region, and a root volume size needs its
 * root device), else `AWS_AMI_ID`, else the newest Ubuntu 22.04 / Deep Learning AMI.
 */
async function imageFor(ctx: PrepareContext, region: string, offer: Offer, spec: InstanceSpec): Promise<{ imageId: string; rootDevice?: string }> {
  const { api } = ctx;
  const chosen = spec.image ?? ctx.amiId;
  if (chosen !== undefined && spec.image === undefined && spec.diskGb === undefined) return { imageId: chosen };
  if (chosen !== undefined) {
    const found = await api.imageById(region, chosen);
    if (!found)
      throw new ProviderError('Unavailable', `AWS ${region}: image ${chosen} not found (AMIs are per region)`, {
        block: 'region',
        code: 'InvalidAMIID.NotFound',
      });
    return found;
  }
  const family = imageFamilyOf(offer);
  const image = await api.newestImage(region, family);
  if (!image)
    throw new ProviderError(
      'Unavailable',
      `AWS ${region}: no ${family === 'gpu' ? 'Deep Learning (Ubuntu 22.04)' : 'Ubuntu 22.04'} image found; set AWS_AMI_ID`,
    );
  return image;
}
