/** zod schemas of the Nebius answers we read, and the plain-JSON shapes of the requests we send (proto field names). */
import { z } from 'zod';

const str = z
  .string()
  .nullish()
  .transform((s) => s ?? '');
const Metadata = z.object({
  id: str,
  parent_id: str,
  name: str,
  labels: z
    .record(z.string(), z.string())
    .nullish()
    .transform((l) => l ?? {}),
});
const AnyMsg = z.object({ type_url: z.string(), value: z.instanceof(Uint8Array) });
const Status = z.object({
  code: z.number(),
  message: str,
  details: z
    .array(AnyMsg)
    .nullish()
    .transform((d) => d ?? []),
});
export const Operation = z.object({ id: str, resource_id: str, status: Status.nullish() });
export type Operation = z.infer<typeof Operation>;
const Nic = z.object({
  name: str,
  ip_address: z.object({ address: str }).nullish(),
  public_ip_address: z.object({ address: str }).nullish(),
});
export const Instance = z.object({
  metadata: Metadata,
  spec: z
    .object({
      resources: z.object({ platform: str, preset: str }).nullish(),
      /** Present (an object) on a preemptible VM; absent (null) on a regular one. */
      preemptible: z.object({ on_preemption: z.union([z.string(), z.number()]).transform(String).nullish() }).nullish(),
      /** What was asked (a Stop call), as opposed to the state reached. */
      stopped: z.boolean().nullish(),
    })
    .nullish(),
  status: z
    .object({ state: z.union([z.string(), z.number()]).transform(String), network_interfaces: z.array(Nic).nullish(), reconciling: z.boolean().nullish() })
    .nullish(),
});
export type Instance = z.infer<typeof Instance>;
/** One page of a List RPC: its items (absent = none) and the token of the next page (empty = last). */
function pageOf<T extends z.ZodTypeAny>(item: T) {
  return z.object({
    items: z
      .array(item)
      .nullish()
      .transform((i): z.output<T>[] => i ?? []),
    next_page_token: str,
  });
}
export const InstancePage = pageOf(Instance);
export const Disk = z.object({ metadata: Metadata, status: z.object({ state: z.union([z.string(), z.number()]).transform(String) }).nullish() });
export type Disk = z.infer<typeof Disk>;
export const DiskPage = pageOf(Disk);
const Preset = z.object({
  name: z.string(),
  resources: z.object({ vcpu_count: z.number().nullish(), memory_gibibytes: z.number().nullish(), gpu_count: z.number().nullish() }).nullish(),
});
export const Platform = z.object({
  metadata: Metadata,
  spec: z
    .object({
      presets: z
        .array(Preset)
        .nullish()
        .transform((p) => p ?? []),
    })
    .nullish(),
  status: z.object({ allowed_for_preemptibles: z.boolean().nullish() }).nullish(),
});
export type Platform = z.infer<typeof Platform>;
export const PlatformPage = pageOf(Platform);
export const SubnetPage = pageOf(z.object({ metadata: Metadata }));
export const Estimate = z.object({
  resource_costs: z
    .array(
      z.object({
        metadata: Metadata.nullish(),
        aggregation_unit: z.object({ unit: str }).nullish(),
        general: z.object({ total: z.object({ cost: str }).nullish() }).nullish(),
      }),
    )
    .nullish()
    .transform((r) => r ?? []),
  currency: str,
});

/**
 * What makes a VM preemptible (spot) at create and at the calculator: the policy (STOP is the only one), the
 * pricing model that takes the current spot price, and no restart after a failure. Absent: a regular VM.
 */
export interface PreemptibleFields {
  preemptible: { on_preemption: 'STOP' };
  follows_spot_price: Record<string, never>;
  recovery_policy: 'FAIL';
}

/** Plain-JSON shapes of the requests we send (proto field names). */
export interface CreateInstanceRequest {
  metadata: { parent_id: string; name: string; labels: Record<string, string> };
  spec: Partial<PreemptibleFields> & {
    resources: { platform: string; preset: string };
    boot_disk: { attach_mode: 'READ_WRITE'; existing_disk: { id: string } };
    network_interfaces: { name: string; subnet_id: string; ip_address: Record<string, never>; public_ip_address: Record<string, never> }[];
    cloud_init_user_data: string;
    hostname?: string;
    /** Only these capacity block groups, never capacity outside them (./reservations.ts). */
    reservation_policy?: { policy: 'STRICT'; reservation_ids: string[] };
  };
}
/** What the calculator needs to price one instance (a partial CreateInstanceRequest). */
export interface PriceRequest {
  metadata: { parent_id: string; name: string };
  spec: Partial<PreemptibleFields> & { resources: { platform: string; preset: string } };
}
export interface CreateDiskRequest {
  metadata: { parent_id: string; name: string; labels: Record<string, string> };
  spec: { size_gibibytes: number; type: 'NETWORK_SSD'; source_image_family: { image_family: string } };
}

export const ExchangedToken = z.object({ access_token: z.string(), token_type: str, expires_in: z.union([z.string(), z.number()]).transform(Number) });
export type ExchangedToken = z.infer<typeof ExchangedToken>;

const Timestamp = z
  .object({ seconds: z.union([z.string(), z.number()]).transform(Number), nanos: z.number().nullish() })
  .nullish()
  .transform((t) => (t && t.seconds > 0 ? new Date(t.seconds * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString() : undefined));
const count = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((n) => Number(n ?? 0));
/** A capacity block group (nebius.capacity.v1): where, for which platform, its limit and usage, its current interval. */
export const CapacityBlockGroup = z.object({
  metadata: Metadata,
  status: z
    .object({
      region: str,
      resource_affinity: z.object({ compute_v1: z.object({ platform: str }).nullish() }).nullish(),
      state: z.union([z.string(), z.number()]).transform(String),
      current_limit: count,
      usage: count,
      current_continuous_interval: z.object({ start_time: Timestamp, end_time: Timestamp }).nullish(),
    })
    .nullish(),
});
export type CapacityBlockGroup = z.infer<typeof CapacityBlockGroup>;
export const CapacityBlockGroupPage = pageOf(CapacityBlockGroup);
