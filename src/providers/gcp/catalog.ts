/**
 * The GCP GPU ladder: a literal list, because the Compute API carries no prices
 * (those live in the Cloud Billing Catalog) and the machine-type ↔ GPU pairing is fixed.
 */

/** Where the prices below come from, for humans reading an offer. */
export const PRICE_SOURCE = 'cloud.google.com/compute/gpus-pricing + vm-instance-pricing, us-central1 on-demand, as read 2025-06';
/** When the prices below were read (offers priced from this table carry it as `pricedAt`, source `catalog`). */
export const PRICE_DATE = '2025-06';

/** One rung: a machine type, the GPU it carries (built in, or attached as a guest accelerator) and its price. */
export interface CatalogEntry {
  machineType: string;
  /** Normalised model name as users type it (`H100`, `A100-80GB`, `T4`). */
  gpuModel?: string;
  gpuCount: number;
  gpuMemoryGiB?: number;
  /** Compute acceleratorType name; offered only in zones that list it. */
  acceleratorType?: string;
  /** N1 types take GPUs as `guestAccelerators`; A2/A3/G2 have them built in. */
  attachAccelerator: boolean;
  vcpus: number;
  memoryGiB: number;
  /** USD per hour, on demand, us-central1 (other regions differ by a few percent). */
  pricePerHour: number;
}

export const CATALOG: readonly CatalogEntry[] = [
  { machineType: 'e2-small', gpuCount: 0, attachAccelerator: false, vcpus: 2, memoryGiB: 2, pricePerHour: 0.0168 },
  {
    machineType: 'n1-standard-4',
    gpuModel: 'T4',
    gpuCount: 1,
    gpuMemoryGiB: 16,
    acceleratorType: 'nvidia-tesla-t4',
    attachAccelerator: true,
    vcpus: 4,
    memoryGiB: 15,
    pricePerHour: 0.54,
  },
  {
    machineType: 'g2-standard-4',
    gpuModel: 'L4',
    gpuCount: 1,
    gpuMemoryGiB: 24,
    acceleratorType: 'nvidia-l4',
    attachAccelerator: false,
    vcpus: 4,
    memoryGiB: 16,
    pricePerHour: 0.7068,
  },
  {
    machineType: 'n1-standard-8',
    gpuModel: 'V100',
    gpuCount: 1,
    gpuMemoryGiB: 16,
    acceleratorType: 'nvidia-tesla-v100',
    attachAccelerator: true,
    vcpus: 8,
    memoryGiB: 30,
    pricePerHour: 2.86,
  },
  {
    machineType: 'a2-highgpu-1g',
    gpuModel: 'A100',
    gpuCount: 1,
    gpuMemoryGiB: 40,
    acceleratorType: 'nvidia-tesla-a100',
    attachAccelerator: false,
    vcpus: 12,
    memoryGiB: 85,
    pricePerHour: 3.6733,
  },
  {
    machineType: 'a2-ultragpu-1g',
    gpuModel: 'A100-80GB',
    gpuCount: 1,
    gpuMemoryGiB: 80,
    acceleratorType: 'nvidia-a100-80gb',
    attachAccelerator: false,
    vcpus: 12,
    memoryGiB: 170,
    pricePerHour: 5.0688,
  },
  {
    machineType: 'a3-highgpu-8g',
    gpuModel: 'H100',
    gpuCount: 8,
    gpuMemoryGiB: 80,
    acceleratorType: 'nvidia-h100-80gb',
    attachAccelerator: false,
    vcpus: 208,
    memoryGiB: 1872,
    pricePerHour: 88.49,
  },
];
