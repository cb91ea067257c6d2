/**
 * `--image` and `--disk-gb` per cloud: the one table the adapters' capabilities, the CLI's up-front
 * check (exit 2 for explicitly named clouds) and `planOffers` (skips a cloud that cannot honour
 * them, with the reason) all read, so the three never disagree. Pure data and one pure check.
 *
 * | cloud          | --image                              | --disk-gb                        |
 * |----------------|--------------------------------------|----------------------------------|
 * | aws            | AMI id                               | root EBS volume                  |
 * | gcp            | image family or image (URL/path)     | boot disk                        |
 * | lambda         | image family or id                   | no: fixed by the type            |
 * | hyperstack     | image name                           | no: fixed by the flavor          |
 * | digitalocean   | image slug or id                     | no: fixed by the size            |
 * | verda          | image slug or id                     | OS volume                        |
 * | nebius         | image family                         | boot disk (GiB)                  |
 * | massedcompute  | image id (a number)                  | no: fixed by the product         |
 * | primeintellect | image name                           | pod disk                         |
 * | runpod, vastai | container image                      | container disk                   |
 * | docker         | container image (on the daemon)      | no                               |
 * | local          | no: local processes                  | no                               |
 */
import type { Capabilities, ImageSupport } from './provider';

/** What one cloud can do with `--image` and `--disk-gb`. */
export type ImageDiskSupport = Required<Pick<Capabilities, 'image' | 'diskGb'>>;

const CONTAINER: ImageSupport = {
  kind: 'container',
  pattern: '^[a-z0-9][a-z0-9._/:-]{0,200}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$',
  format: 'a container image reference (REPO[:TAG][@sha256:DIGEST])',
  example: 'nvidia/cuda:12.4.1-runtime-ubuntu22.04',
};

const vendor = (pattern: string, format: string, example: string): ImageSupport => ({ kind: 'vendor-image', pattern, format, example });

/** Per cloud; a cloud missing here takes neither flag. */
export const IMAGE_DISK: Readonly<Record<string, ImageDiskSupport>> = {
  aws: {
    image: { kind: 'ami', pattern: '^ami-([0-9a-f]{8}|[0-9a-f]{17})$', format: 'an AMI id (ami- and 8 or 17 hex digits)', example: 'ami-0abcdef1234567890' },
    diskGb: { min: 8, max: 16_384 },
  },
  gcp: {
    image: {
      kind: 'gcp-image',
      pattern: '^(https://www\\.googleapis\\.com/compute/v1/)?projects/[a-z][a-z0-9.:-]{2,62}/global/images/(family/)?[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
      format: 'an image family (projects/PROJECT/global/images/family/FAMILY) or image (projects/PROJECT/global/images/NAME)',
      example: 'projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts',
    },
    diskGb: { min: 10, max: 65_536 },
  },
  lambda: { image: vendor('^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', 'an image family or image id', 'lambda-stack-24-04'), diskGb: false },
  hyperstack: { image: vendor('^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,99}$', 'an image name', 'Ubuntu Server 22.04 LTS R535 CUDA 12.2'), diskGb: false },
  digitalocean: { image: vendor('^([a-z0-9][a-z0-9.-]{0,63}|[0-9]{1,12})$', 'an image slug or numeric image id', 'gpu-h100x1-base'), diskGb: false },
  verda: {
    image: vendor('^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$', 'an image slug or id', 'ubuntu-24.04-cuda-12.8-open-docker'),
    diskGb: { min: 20, max: 16_384 },
  },
  nebius: { image: vendor('^[a-z0-9][a-z0-9._-]{0,62}$', 'an image family', 'ubuntu22.04-cuda12'), diskGb: { min: 10, max: 16_384 } },
  massedcompute: { image: vendor('^[0-9]{1,9}$', 'a numeric image id (GET /images)', '42'), diskGb: false },
  primeintellect: { image: vendor('^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', 'an image name', 'ubuntu_22_cuda_12'), diskGb: { min: 10, max: 16_384 } },
  runpod: { image: CONTAINER, diskGb: { min: 10, max: 4_096 } },
  vastai: { image: CONTAINER, diskGb: { min: 10, max: 4_096 } },
  docker: { image: { ...CONTAINER, format: 'a container image the Docker daemon has (REPO[:TAG])', example: 'gpuprov/sshd:1' }, diskGb: false },
  local: { image: false, diskGb: false },
};

/** The support of `cloud` (neither flag for an unknown one). */
export function imageDiskOf(cloud: string): ImageDiskSupport {
  return IMAGE_DISK[cloud] ?? { image: false, diskGb: false };
}

/** Why a cloud cannot honour `--image`/`--disk-gb`: the flag, what is wrong, and the fix. */
export interface ImageDiskProblem {
  flag: '--image' | '--disk-gb';
  message: string;
  fix: string;
}

const clouds = (ok: (s: ImageDiskSupport) => boolean): string =>
  Object.entries(IMAGE_DISK)
    .filter(([, s]) => ok(s))
    .map(([c]) => c)
    .join(', ');

/** The first reason `cloud` (with these capabilities) cannot honour the wanted image and disk, or undefined. */
export function imageDiskProblem(
  cloud: string,
  caps: Pick<Capabilities, 'image' | 'diskGb'>,
  want: { image?: string; diskGb?: number },
): ImageDiskProblem | undefined {
  const image = caps.image ?? false;
  const disk = caps.diskGb ?? false;
  if (want.image !== undefined) {
    if (!image)
      return {
        flag: '--image',
        message: `${cloud} cannot use --image (its image is fixed)`,
        fix: `leave --image out, or choose a cloud that takes one: ${clouds((s) => s.image !== false)}`,
      };
    if (!new RegExp(image.pattern).test(want.image))
      return {
        flag: '--image',
        message: `--image ${JSON.stringify(want.image)} is not ${image.format}, which ${cloud} needs`,
        fix: `e.g. --image ${image.example}`,
      };
  }
  if (want.diskGb !== undefined) {
    if (!disk)
      return {
        flag: '--disk-gb',
        message: `${cloud} cannot use --disk-gb (the instance type fixes its disk)`,
        fix: `leave --disk-gb out, or choose a cloud that sizes disks: ${clouds((s) => s.diskGb !== false)}`,
      };
    if (want.diskGb < disk.min || want.diskGb > disk.max)
      return { flag: '--disk-gb', message: `--disk-gb ${want.diskGb} is out of ${cloud}'s range`, fix: `use ${disk.min} to ${disk.max} GB on ${cloud}` };
  }
  return undefined;
}
