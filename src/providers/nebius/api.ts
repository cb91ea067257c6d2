/**
 * The only file that talks to Nebius: gRPC via @grpc/grpc-js with the `.proto` subset in `./proto`.
 * Every response is zod-parsed; the IAM token travels only in call metadata, never in messages.
 * Write calls answer an Operation: it is polled (OperationService.Get, at the address of the
 * service that returned it, as the SDK does) for a few seconds within the call; a failed one is
 * thrown classified, a still-running one is returned and the workflow's observe polling takes over.
 */
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { ServiceAccountTokens, staticToken, type ExchangeTokenRequest, type ServiceAccountKey, type TokenSource } from './auth';
import { redactError } from '../redact';
import { serviceAddress } from './endpoints';
import { GrpcCode, classify, fromGrpcError, serviceError, type NebiusFailure } from './errors';
import type { CapacityBlockGroup, Platform } from './schemas';
import {
  CapacityBlockGroupPage,
  Disk,
  DiskPage,
  Estimate,
  ExchangedToken,
  Instance,
  InstancePage,
  Operation,
  PlatformPage,
  SubnetPage,
  type CreateDiskRequest,
  type CreateInstanceRequest,
  type PriceRequest,
} from './schemas';

export type {
  CapacityBlockGroup,
  CreateDiskRequest,
  CreateInstanceRequest,
  Disk,
  Instance,
  Operation,
  Platform,
  PreemptibleFields,
  PriceRequest,
} from './schemas';

export interface NebiusApiOptions {
  /** A static IAM token, or a service account whose key is exchanged for tokens. */
  auth: { token: string } | { serviceAccount: ServiceAccountKey };
  /** One `host:port` for every service (fixtures, proxies); else the per-service defaults. */
  endpoint?: string;
  /** Plain-text gRPC (tests only); production uses TLS. */
  insecure?: boolean;
  /** Deadline of every call; bad credentials can hang token renewal (dstack). */
  timeoutMs?: number;
  /** How long a write call waits for its Operation to finish (default 10 s), and how often it looks (1 s). */
  operationWaitMs?: number;
  operationPollMs?: number;
  /** Injectable for tests: the clock token renewal reads, and the pause between operation polls. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const PROTO_ROOT = join(__dirname, 'proto');
export const PROTO_FILES = [
  'nebius/compute/v1/compute.proto',
  'nebius/vpc/v1/vpc.proto',
  'nebius/billing/v1/billing.proto',
  'nebius/iam/v1/iam.proto',
  'nebius/capacity/v1/capacity.proto',
];
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

const OPERATIONS = 'nebius.common.v1.OperationService';
/** Bound on the pages one List follows. */
const MAX_PAGES = 100;
const TOKENS = 'nebius.iam.v1.TokenExchangeService';
interface CallExtra {
  orNotFound?: boolean;
  idempotencyKey?: string;
  /** Dial the address of this service instead of the called one's (operations). */
  via?: string;
  /** No bearer token (the token exchange itself). */
  anonymous?: boolean;
}

export class NebiusApi {
  private readonly clients = new Map<string, grpc.Client>();
  private readonly tokens: TokenSource;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: NebiusApiOptions) {
    this.tokens =
      'token' in opts.auth ? staticToken(opts.auth.token) : new ServiceAccountTokens(opts.auth.serviceAccount, (r) => this.exchangeToken(r), opts.now);
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  private client(ctorPath: string, via: string): grpc.Client {
    const address = this.opts.endpoint ?? serviceAddress(via);
    const key = `${address} ${ctorPath}`;
    let c = this.clients.get(key);
    if (!c) {
      const Ctor = serviceCtor(ctorPath);
      const creds = this.opts.insecure ? grpc.credentials.createInsecure() : grpc.credentials.createSsl();
      c = new Ctor(address, creds);
      this.clients.set(key, c);
    }
    return c;
  }

  /** One unary call; `NOT_FOUND` becomes `undefined` when `orNotFound`, every other failure a ProviderError. */
  private async call<T>(ctorPath: string, method: string, req: object, schema: z.ZodType<T>, extra: CallExtra = {}): Promise<T | undefined> {
    const client = this.client(ctorPath, extra.via ?? ctorPath);
    const md = new grpc.Metadata();
    const token = extra.anonymous ? undefined : await this.tokens.token();
    if (token) md.set('authorization', `Bearer ${token}`);
    // What this call carries that a vendor message could echo: the bearer, or the signed JWT being exchanged.
    const secrets = [token, (req as { subject_token?: unknown }).subject_token].filter((v): v is string => typeof v === 'string');
    if (extra.idempotencyKey) md.set('x-idempotency-key', extra.idempotencyKey);
    const what = `${ctorPath.split('.').pop() ?? ctorPath}.${method}`;
    const raw = await new Promise<unknown>((resolve, reject) => {
      const fn = (
        client as unknown as Record<string, (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: unknown) => void) => void>
      )[method]!;
      fn.call(client, req, md, { deadline: Date.now() + (this.opts.timeoutMs ?? 30_000) }, (e, v) => (e ? reject(e) : resolve(v)));
    }).catch((e: unknown) => {
      const f = fromGrpcError(e);
      if (extra.orNotFound && f?.code === GrpcCode.NOT_FOUND) return undefined;
      throw redactError(classify(f ?? e, what), secrets);
    });
    if (raw === undefined) return undefined;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw classify(new Error(`unexpected response shape: ${parsed.error.issues[0]?.message ?? ''}`), what);
    return parsed.data;
  }

  /**
   * Every page of a List RPC, 100 items a page, at most {@link MAX_PAGES} pages (a server whose
   * token never ends must not hold the activity forever).
   */
  private async listAll<T>(service: string, parentId: string, schema: z.ZodType<{ items: T[]; next_page_token: string }>): Promise<T[]> {
    const out: T[] = [];
    let page_token = '';
    for (let n = 0; n < MAX_PAGES; n++) {
      const page = (await this.call(service, 'List', { parent_id: parentId, page_size: 100, page_token }, schema))!;
      out.push(...page.items);
      page_token = page.next_page_token;
      if (!page_token) return out;
    }
    throw classify(new Error(`more than ${MAX_PAGES} pages`), `${service.split('.').pop() ?? service}.List`);
  }

  /** InstanceService.List, every page (no server-side filter exists). */
  listInstances(projectId: string): Promise<Instance[]> {
    return this.listAll('nebius.compute.v1.InstanceService', projectId, InstancePage);
  }

  /** DiskService.List, every page: the project's disks, for the sweep of boot disks left without an instance. */
  listDisks(projectId: string): Promise<Disk[]> {
    return this.listAll('nebius.compute.v1.DiskService', projectId, DiskPage);
  }

  /**
   * Create; a name clash answers `{ existingId }` (from the ServiceError detail when the server
   * sends it). A finished operation that failed leaves as its classified ProviderError.
   */
  async createInstance(req: CreateInstanceRequest, idempotencyKey: string): Promise<{ op: Operation } | { existingId?: string }> {
    let op: Operation;
    try {
      op = (await this.call('nebius.compute.v1.InstanceService', 'Create', req, Operation, { idempotencyKey }))!;
    } catch (e) {
      if (e instanceof ProviderError && e.code?.startsWith('ALREADY_EXISTS')) {
        const id = serviceError((e.cause as NebiusFailure | undefined)?.details ?? [])?.resourceId;
        return id ? { existingId: id } : {};
      }
      throw e;
    }
    return { op: await this.settle(op, 'nebius.compute.v1.InstanceService', 'InstanceService.Create') };
  }

  getInstanceByName(projectId: string, name: string): Promise<Instance | undefined> {
    return this.call('nebius.compute.v1.InstanceService', 'GetByName', { parent_id: projectId, name }, Instance, { orNotFound: true });
  }

  /** Delete; an unknown id is success (`undefined`), a failed operation its ProviderError. */
  async deleteInstance(id: string): Promise<Operation | undefined> {
    const op = await this.call('nebius.compute.v1.InstanceService', 'Delete', { id }, Operation, { orNotFound: true });
    return op && this.settle(op, 'nebius.compute.v1.InstanceService', 'InstanceService.Delete');
  }

  getDiskByName(projectId: string, name: string): Promise<Disk | undefined> {
    return this.call('nebius.compute.v1.DiskService', 'GetByName', { parent_id: projectId, name }, Disk, { orNotFound: true });
  }

  /** Create; a failed operation leaves as its ProviderError. */
  async createDisk(req: CreateDiskRequest): Promise<Operation> {
    return this.settle((await this.call('nebius.compute.v1.DiskService', 'Create', req, Operation))!, 'nebius.compute.v1.DiskService', 'DiskService.Create');
  }

  /** Delete; an unknown id is success (`undefined`), a failed operation its ProviderError. */
  async deleteDisk(id: string): Promise<Operation | undefined> {
    const op = await this.call('nebius.compute.v1.DiskService', 'Delete', { id }, Operation, { orNotFound: true });
    return op && this.settle(op, 'nebius.compute.v1.DiskService', 'DiskService.Delete');
  }

  /** PlatformService.List, every page. */
  listPlatforms(parentId: string): Promise<Platform[]> {
    return this.listAll('nebius.compute.v1.PlatformService', parentId, PlatformPage);
  }

  /** CapacityBlockGroupService.List, every page: the project's capacity block groups (what `reservation_policy` names). */
  listCapacityBlockGroups(projectId: string): Promise<CapacityBlockGroup[]> {
    return this.listAll('nebius.capacity.v1.CapacityBlockGroupService', projectId, CapacityBlockGroupPage);
  }

  /** The first subnet of the project (the default network's). */
  async firstSubnetId(projectId: string): Promise<string | undefined> {
    const page = (await this.call('nebius.vpc.v1.SubnetService', 'List', { parent_id: projectId, page_size: 100, page_token: '' }, SubnetPage))!;
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
    const res = (await this.call('nebius.billing.v1.CalculatorService', 'EstimateBatch', req, Estimate))!;
    const out = new Map<string, number>();
    res.resource_costs.forEach((c, i) => {
      const cost = Number(c.general?.total?.cost);
      const name = c.metadata?.name || reqs[i]?.metadata.name;
      if (name && Number.isFinite(cost) && (c.aggregation_unit?.unit ?? 'hour').toLowerCase().startsWith('hour')) out.set(name, cost);
    });
    return out;
  }

  /**
   * Poll a running operation until it finishes or `operationWaitMs` has passed (a bounded number
   * of looks). Finished and failed: its classified ProviderError. Else the latest state.
   */
  private async settle(op: Operation, source: string, what: string): Promise<Operation> {
    const every = this.opts.operationPollMs ?? 1_000;
    const looks = Math.ceil((this.opts.operationWaitMs ?? 10_000) / every);
    let cur = op;
    for (let i = 0; i < looks && !cur.status && cur.id; i++) {
      await this.sleep(every);
      cur = (await this.call(OPERATIONS, 'Get', { id: op.id }, Operation, { via: source }))!;
    }
    const failed = cur.status && operationFailure(cur);
    if (failed) throw redactError(classify(failed, what));
    return cur;
  }

  /** TokenExchangeService.Exchange (no bearer); any failure is a Credentials error naming the cause's code only. */
  private async exchangeToken(req: ExchangeTokenRequest): Promise<ExchangedToken> {
    try {
      return (await this.call(TOKENS, 'Exchange', req, ExchangedToken, { anonymous: true }))!;
    } catch (e) {
      const pe = classify(e, 'TokenExchangeService.Exchange');
      if (pe.kind === 'Transient' || pe.kind === 'Credentials') throw pe;
      throw new ProviderError('Credentials', pe.message, { ...(pe.code ? { code: pe.code } : {}), cause: pe });
    }
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

/** A finished Operation that failed, as a classifiable failure; `undefined` while running or on success. */
export function operationFailure(op: Operation): NebiusFailure | undefined {
  const s = op.status;
  if (!s || s.code === GrpcCode.OK) return undefined;
  return { code: s.code, message: s.message, details: s.details };
}
