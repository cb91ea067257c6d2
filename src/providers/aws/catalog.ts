/**
 * The AWS instance-type ladder: which EC2 type serves which GPU ask, with its list price.
 *
 * Prices are hourly on-demand Linux prices in us-east-1, USD, from
 * https://aws.amazon.com/ec2/pricing/on-demand/ as listed in 2025-06 (after the June 2025
 * P4d/P5 price reduction). EC2 has no pricing call in its own API (that is the separate
 * Price List API), so the ladder is a literal table; other regions usually list within
 * ~+25% of us-east-1, and the us-east-1 figure is used as the estimate everywhere.
 * Whether a type exists in a region is not assumed: `plan` asks DescribeInstanceTypeOfferings.
 */

/** Which image family `prepare` looks up for a type (see `IMAGE_FAMILIES` in api.ts). */
export type ImageFamily = 'gpu' | 'cpu';

export interface CatalogEntry {
  instanceType: string;
  /** Upper-case GPU model as users type it; absent for CPU types. */
  gpuModel?: string;
  gpuCount: number;
  gpuMemoryGiB?: number;
  vcpus: number;
  memoryGiB: number;
  /** On-demand USD/hour, us-east-1, Linux. */
  pricePerHour: number;
  /** When the price above was read from the pricing page. */
  priceDate: string;
  image: ImageFamily;
}

const D = '2025-06';

/** A row of the ladder: every price is from the same reading (`D`), and GPU types boot the GPU image, CPU types the plain one. */
type Row = Omit<CatalogEntry, 'priceDate' | 'image'>;
const gpu = (r: Row): CatalogEntry => ({ ...r, priceDate: D, image: 'gpu' });
const cpu = (r: Row): CatalogEntry => ({ ...r, priceDate: D, image: 'cpu' });

/** Ordered by model, then GPU count; `plan` lists them by count, then price. */
export const CATALOG: readonly CatalogEntry[] = [
  gpu({ instanceType: 'g4dn.xlarge', gpuModel: 'T4', gpuCount: 1, gpuMemoryGiB: 16, vcpus: 4, memoryGiB: 16, pricePerHour: 0.526 }),
  gpu({ instanceType: 'g4dn.2xlarge', gpuModel: 'T4', gpuCount: 1, gpuMemoryGiB: 16, vcpus: 8, memoryGiB: 32, pricePerHour: 0.752 }),
  gpu({ instanceType: 'g4dn.12xlarge', gpuModel: 'T4', gpuCount: 4, gpuMemoryGiB: 16, vcpus: 48, memoryGiB: 192, pricePerHour: 3.912 }),
  gpu({ instanceType: 'g4dn.metal', gpuModel: 'T4', gpuCount: 8, gpuMemoryGiB: 16, vcpus: 96, memoryGiB: 384, pricePerHour: 7.824 }),
  gpu({ instanceType: 'g5.xlarge', gpuModel: 'A10G', gpuCount: 1, gpuMemoryGiB: 24, vcpus: 4, memoryGiB: 16, pricePerHour: 1.006 }),
  gpu({ instanceType: 'g5.2xlarge', gpuModel: 'A10G', gpuCount: 1, gpuMemoryGiB: 24, vcpus: 8, memoryGiB: 32, pricePerHour: 1.212 }),
  gpu({ instanceType: 'g5.12xlarge', gpuModel: 'A10G', gpuCount: 4, gpuMemoryGiB: 24, vcpus: 48, memoryGiB: 192, pricePerHour: 5.672 }),
  gpu({ instanceType: 'g5.48xlarge', gpuModel: 'A10G', gpuCount: 8, gpuMemoryGiB: 24, vcpus: 192, memoryGiB: 768, pricePerHour: 16.288 }),
  gpu({ instanceType: 'g6.xlarge', gpuModel: 'L4', gpuCount: 1, gpuMemoryGiB: 24, vcpus: 4, memoryGiB: 16, pricePerHour: 0.8048 }),
  gpu({ instanceType: 'g6.12xlarge', gpuModel: 'L4', gpuCount: 4, gpuMemoryGiB: 24, vcpus: 48, memoryGiB: 192, pricePerHour: 4.6016 }),
  gpu({ instanceType: 'g6.48xlarge', gpuModel: 'L4', gpuCount: 8, gpuMemoryGiB: 24, vcpus: 192, memoryGiB: 768, pricePerHour: 13.3504 }),
  gpu({ instanceType: 'g6e.xlarge', gpuModel: 'L40S', gpuCount: 1, gpuMemoryGiB: 48, vcpus: 4, memoryGiB: 32, pricePerHour: 1.861 }),
  gpu({ instanceType: 'g6e.12xlarge', gpuModel: 'L40S', gpuCount: 4, gpuMemoryGiB: 48, vcpus: 48, memoryGiB: 384, pricePerHour: 10.493 }),
  gpu({ instanceType: 'g6e.48xlarge', gpuModel: 'L40S', gpuCount: 8, gpuMemoryGiB: 48, vcpus: 192, memoryGiB: 1536, pricePerHour: 30.131 }),
  gpu({ instanceType: 'p3.2xlarge', gpuModel: 'V100', gpuCount: 1, gpuMemoryGiB: 16, vcpus: 8, memoryGiB: 61, pricePerHour: 3.06 }),
  gpu({ instanceType: 'p3.8xlarge', gpuModel: 'V100', gpuCount: 4, gpuMemoryGiB: 16, vcpus: 32, memoryGiB: 244, pricePerHour: 12.24 }),
  gpu({ instanceType: 'p3.16xlarge', gpuModel: 'V100', gpuCount: 8, gpuMemoryGiB: 16, vcpus: 64, memoryGiB: 488, pricePerHour: 24.48 }),
  gpu({ instanceType: 'p4d.24xlarge', gpuModel: 'A100', gpuCount: 8, gpuMemoryGiB: 40, vcpus: 96, memoryGiB: 1152, pricePerHour: 21.96 }),
  gpu({ instanceType: 'p5.48xlarge', gpuModel: 'H100', gpuCount: 8, gpuMemoryGiB: 80, vcpus: 192, memoryGiB: 2048, pricePerHour: 55.04 }),
  cpu({ instanceType: 't3.micro', gpuCount: 0, vcpus: 2, memoryGiB: 1, pricePerHour: 0.0104 }),
  cpu({ instanceType: 't3.small', gpuCount: 0, vcpus: 2, memoryGiB: 2, pricePerHour: 0.0208 }),
];
