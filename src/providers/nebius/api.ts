/**
 * The only file that talks to Nebius: gRPC via @grpc/grpc-js with the `.proto` subset in `./proto`.
 * Every response is zod-parsed; the IAM token travels only in call metadata, never in messages.
 */
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { GrpcCode, classify, fromGrpcError, serviceError, type NebiusFailure } from './errors';

/** Where each service lives; `{service}.api.nebius.cloud:443` per the API README. */
const DEFAULT_ENDPOINTS = {
  compute: 'compute.api.nebius.cloud:443',
  vpc: 'vpc.api.nebius.cloud:443',
  // (?) derived from the service's api_service_name "api.calculator.billing-data-plane".
  billing: 'calculator.billing-data-plane.api.nebius.cloud:443',
} as const;
type Service = keyof typeof DEFAULT_ENDPOINTS;

export interface NebiusApiOptions {
  token: string;
  /** One `host:port` for every service (fixtures, proxies); else the per-service defaults. */
  endpoint?: string;
  /** Plain-text gRPC (tests only); production uses TLS. */
  insecure?: boolean;
  /** Deadline of every call; bad credentials can hang token renewal (dstack). */
  timeoutMs?: number;
}

const PROTO_ROOT = join(__dirname, 'proto');
const PROTO_FILES = ['nebius/compute/v1/compute.proto', 'nebius/vpc/v1/vpc.proto', 'nebius/billing/v1/billing.proto'];
const LOADER = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_ROOT] };

/** Loaded once per process: the proto package and its service constructors. */
let loaded: grpc.GrpcObject | undefined;
export function nebiusProto(): grpc.GrpcObject {
  loaded ??= grpc.loadPackageDefinition(loadSync(PROTO_FILES, LOADER));
  return loaded;
}
export function serviceCtor(path: string): grpc.ServiceClientConstructor {
  let node: unknown = nebiusProto();
  for (const part of path.split('.')) node = (node as Record<string, unknown>)[part];
  return node as grpc.ServiceClientConstructor;
}

const str = z.string().nullish().transform((s) => s ?? '');
const Metadata = z.object({ id: str, parent_id: str, name: str, labels: z.record(z.string(), z.string()).nullish().transform((l) => l ?? {}) });
const AnyMsg = z.object({ type_url: z.string(), value: z.instanceof(Uint8Array) });
const Status = z.object({ code: z.number(), message: str, details: z.array(AnyMsg).nullish().transform((d) => d ?? []) });
export const Operation = z.object({ id: str, resource_id: str, status: Status.nullish() });
export type Operation = z.infer<typeof Operation>;
const Nic = z.object({
  name: str,
  ip_address: z.object({ address: str }).nullish(),
  public_ip_address: z.object({ address: str }).nullish(),
});
export const Instance = z.object({
  metadata: Metadata,
  spec: z.object({ resources: z.object({ platform: str, preset: str }).nullish() }).nullish(),
  status: z.object({ state: z.union([z.string(), z.number()]).transform(String), network_interfaces: z.array(Nic).nullish(), reconciling: z.boolean().nullish() }).nullish(),
});
export type Instance = z.infer<typeof Instance>;
const InstancePage = z.object({ items: z.array(Instance).nullish().transform((i) => i ?? []), next_page_token: str });
export const Disk = z.object({ metadata: Metadata, status: z.object({ state: z.union([z.string(), z.number()]).transform(String) }).nullish() });
export type Disk = z.infer<typeof Disk>;
const Preset = z.object({
  name: z.string(),
  resources: z.object({ vcpu_count: z.number().nullish(), memory_gibibytes: z.number().nullish(), gpu_count: z.number().nullish() }).nullish(),
});
export const Platform = z.object({ metadata: Metadata, spec: z.object({ presets: z.array(Preset).nullish().transform((p) => p ?? []) }).nullish() });
export type Platform = z.infer<typeof Platform>;
const PlatformPage = z.object({ items: z.array(Platform).nullish().transform((i) => i ?? []), next_page_token: str });
const SubnetPage = z.object({ items: z.array(z.object({ metadata: Metadata })).nullish().transform((i) => i ?? []), next_page_token: str });
const Estimate = z.object({
  resource_costs: z
    .array(z.object({ metadata: Metadata.nullish(), aggregation_unit: z.object({ unit: str }).nullish(), general: z.object({ total: z.object({ cost: str }).nullish() }).nullish() }))
    .nullish()
    .transform((r) => r ?? []),
  currency: str,
});

/** Plain-JSON shapes of the requests we send (proto field names). */
export interface CreateInstanceRequest {
  metadata: { parent_id: string; name: string; labels: Record<string, string> };
  spec: {
    resources: { platform: string; preset: string };
    boot_disk: { attach_mode: 'READ_WRITE'; existing_disk: { id: string } };
    network_interfaces: { name: string; subnet_id: string; ip_address: Record<string, never>; public_ip_address: Record<string, never> }[];
    cloud_init_user_data: string;
    hostname?: string;
  };
}
/** What the calculator needs to price one instance (a partial CreateInstanceRequest). */
export interface PriceRequest {
  metadata: { parent_id: string; name: string };
  spec: { resources: { platform: string; preset: string } };
}
export interface CreateDiskRequest {
  metadata: { parent_id: string; name: string; labels: Record<string, string> };
  spec: { size_gibibytes: number; type: 'NETWORK_SSD'; source_image_family: { image_family: string } };
}

export class NebiusApi {
  private readonly clients = new Map<string, grpc.Client>();

  constructor(private readonly opts: NebiusApiOptions) {}

  private client(service: Service, ctorPath: string): grpc.Client {
    let c = this.clients.get(ctorPath);
    if (!c) {
      const Ctor = serviceCtor(ctorPath);
      const creds = this.opts.insecure ? grpc.credentials.createInsecure() : grpc.credentials.createSsl();
      c = new Ctor(this.opts.endpoint ?? DEFAULT_ENDPOINTS[service], creds);
      this.clients.set(ctorPath, c);
    }
    return c;
  }

  /** One unary call; `NOT_FOUND` becomes `undefined` when `orNotFound`, every other failure a ProviderError. */
  private async call<T>(service: Service, ctorPath: string, method: string, req: object, schema: z.ZodType<T>, extra: { orNotFound?: boolean; idempotencyKey?: string } = {}): Promise<T | undefined> {
    const client = this.client(service, ctorPath);
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${this.opts.token}`);
    if (extra.idempotencyKey) md.set('x-idempotency-key', extra.idempotencyKey);
    const what = `${ctorPath.split('.').pop() ?? ctorPath}.${method}`;
    const raw = await new Promise<unknown>((resolve, reject) => {
      const fn = (client as unknown as Record<string, (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: unknown) => void) => void>)[method]!;
      fn.call(client, req, md, { deadline: Date.now() + (this.opts.timeoutMs ?? 30_000) }, (e, v) => (e ? reject(e) : resolve(v)));
    }).catch((e: unknown) => {
      const f = fromGrpcError(e);
      if (extra.orNotFound && f?.code === GrpcCode.NOT_FOUND) return undefined;
      throw classify(f ?? e, what);
    });
    if (raw === undefined) return undefined;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw classify(new Error(`unexpected response shape: ${parsed.error.issues[0]?.message ?? ''}`), what);
    return parsed.data;
  }

  /** InstanceService.List, every page (no server-side filter exists). */
  async listInstances(projectId: string): Promise<Instance[]> {
    const out: Instance[] = [];
    let page_token = '';
    do {
      const page = (await this.call('compute', 'nebius.compute.v1.InstanceService', 'List', { parent_id: projectId, page_size: 100, page_token }, InstancePage))!;
      out.push(...page.items);
      page_token = page.next_page_token;
    } while (page_token);
    return out;
  }

  /**
   * Create; a name clash answers `{ existingId }` (from the ServiceError detail when the server
   * sends it). A finished operation that failed leaves as its classified ProviderError.
   */
  async createInstance(req: CreateInstanceRequest, idempotencyKey: string): Promise<{ op: Operation } | { existingId?: string }> {
    let op: Operation;
    try {
      op = (await this.call('compute', 'nebius.compute.v1.InstanceService', 'Create', req, Operation, { idempotencyKey }))!;
    } catch (e) {
      if (e instanceof ProviderError && e.code?.startsWith('ALREADY_EXISTS')) {
        const id = serviceError((e.cause as NebiusFailure | undefined)?.details ?? [])?.resourceId;
        return id ? { existingId: id } : {};
      }
      throw e;
    }
    return { op: succeeded(op, 'InstanceService.Create') };
  }

  getInstanceByName(projectId: string, name: string): Promise<Instance | undefined> {
    return this.call('compute', 'nebius.compute.v1.InstanceService', 'GetByName', { parent_id: projectId, name }, Instance, { orNotFound: true });
  }

  /** Delete; an unknown id is success (`undefined`), a failed operation its ProviderError. */
  async deleteInstance(id: string): Promise<Operation | undefined> {
    return succeeded(await this.call('compute', 'nebius.compute.v1.InstanceService', 'Delete', { id }, Operation, { orNotFound: true }), 'InstanceService.Delete');
  }

  getDiskByName(projectId: string, name: string): Promise<Disk | undefined> {
    return this.call('compute', 'nebius.compute.v1.DiskService', 'GetByName', { parent_id: projectId, name }, Disk, { orNotFound: true });
  }

  /** Create; a failed operation leaves as its ProviderError. */
  async createDisk(req: CreateDiskRequest): Promise<Operation> {
    return succeeded((await this.call('compute', 'nebius.compute.v1.DiskService', 'Create', req, Operation))!, 'DiskService.Create');
  }

  /** Delete; an unknown id is success (`undefined`), a failed operation its ProviderError. */
  async deleteDisk(id: string): Promise<Operation | undefined> {
    return succeeded(await this.call('compute', 'nebius.compute.v1.DiskService', 'Delete', { id }, Operation, { orNotFound: true }), 'DiskService.Delete');
  }

  /** PlatformService.List, every page. */
  async listPlatforms(parentId: string): Promise<Platform[]> {
    const out: Platform[] = [];
    let page_token = '';
    do {
      const page = (await this.call('compute', 'nebius.compute.v1.PlatformService', 'List', { parent_id: parentId, page_size: 100, page_token }, PlatformPage))!;
      out.push(...page.items);
      page_token = page.next_page_token;
    } while (page_token);
    return out;
  }

  /** The first subnet of the project (the default network's). */
  async firstSubnetId(projectId: string): Promise<string | undefined> {
    const page = (await this.call('vpc', 'nebius.vpc.v1.SubnetService', 'List', { parent_id: projectId, page_size: 100, page_token: '' }, SubnetPage))!;
    return page.items[0]?.metadata.id || undefined;
  }

  /**
   * Hourly USD price per create request, via billing CalculatorService.EstimateBatch. Each request
   * is priced individually; results are matched back by `metadata.name`.
   */
  async hourlyPrices(reqs: PriceRequest[]): Promise<Map<string, number>> {
    const serialize = serviceCtor('nebius.compute.v1.InstanceService').service.Create!.requestSerialize;
    const resource_specs = reqs.map((r) => ({ spec: { type_url: 'type.googleapis.com/nebius.compute.v1.CreateInstanceRequest', value: serialize(r) } }));
    const req = { resource_specs, currency: 'usd', filter_aggregation_unit: { filter_aggregation_unit_values: ['FILTER_AGGREGATION_UNIT_HOUR'] } };
    const res = (await this.call('billing', 'nebius.billing.v1.CalculatorService', 'EstimateBatch', req, Estimate))!;
    const out = new Map<string, number>();
    res.resource_costs.forEach((c, i) => {
      const cost = Number(c.general?.total?.cost);
      const name = c.metadata?.name || reqs[i]?.metadata.name;
      if (name && Number.isFinite(cost) && (c.aggregation_unit?.unit ?? 'hour').toLowerCase().startsWith('hour')) out.set(name, cost);
    });
    return out;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

/** The operation, unless it finished and failed: then its classified ProviderError is thrown. */
function succeeded<T extends Operation | undefined>(op: T, what: string): T {
  const failed = op && operationFailure(op);
  if (failed) throw classify(failed, what);
  return op;
}

/** A finished Operation that failed, as a classifiable failure; `undefined` while running or on success. */
export function operationFailure(op: Operation): NebiusFailure | undefined {
  const s = op.status;
  if (!s || s.code === GrpcCode.OK) return undefined;
  return { code: s.code, message: s.message, details: s.details };
}
