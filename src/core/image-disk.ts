/**
 * `--image` and `--disk-gb`: the one pure check the CLI (exit 2 for explicitly named clouds) and
 * `planOffers` (skips a cloud that cannot honour them, with the reason) both run, over what the
 * cloud table (src/core/clouds.ts) says each cloud takes, which the adapters' capabilities also
 * carry, so the three never disagree.
 */
import { cloudsWhere, factsOf, type CloudFacts } from './clouds';
import type { Capabilities } from './provider';

/** What one cloud can do with `--image` and `--disk-gb`. */
export type ImageDiskSupport = Required<Pick<Capabilities, 'image' | 'diskGb'>>;

/** The support of `cloud` (neither flag for an unknown one). */
export function imageDiskOf(cloud: string): ImageDiskSupport {
  const f = factsOf(cloud);
  return f ? { image: f.image, diskGb: f.diskGb } : { image: false, diskGb: false };
}

/** Why a cloud cannot honour `--image`/`--disk-gb`: the flag, what is wrong, and the fix. */
export interface ImageDiskProblem {
  flag: '--image' | '--disk-gb';
  message: string;
  fix: string;
}

const clouds = (ok: (f: CloudFacts) => boolean): string => cloudsWhere(ok).join(', ');

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
