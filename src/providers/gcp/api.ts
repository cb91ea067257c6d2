/**
 * The only file that talks to Compute Engine, through `@google-cloud/compute` in REST mode
 * (`fallback: true`). Every response is zod-parsed; every SDK retry is switched off
 * (Temporal retries, adapters do not). Errors leave as ProviderError via `classify`.
 */
import type * as ComputeSdk from '@google-cloud/compute';
import type {
  AcceleratorTypesClient,
  FirewallsClient,
  ImagesClient,
  InstancesClient,
  RegionsClient,
  ZoneOperationsClient,
  ZonesClient,
} from '@google-cloud/compute';
import * as fs from 'node:fs';
import { z } from 'zod';
import type { ProviderError } from '../../core/errors';
import { redactError } from '../redact';
import { classify, classifyOperation } from './errors';

/** How to reach Compute: the project, and for tests a base URL such as `http://127.0.0.1:4321` (no auth then). */
export interface ComputeApiOptions {
  project: string;
  endpoint?: string;
  /** A service-account or ADC JSON file; without it the SDK uses Application Default Credentials. */
  keyFilename?: string;
  /** `maxResults` per list page (Compute's default is 500). */
  pageSize?: number;
}

const str = z.string().nullish();

const Instance = z.object({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  statusMessage: str,
  zone: str,
  machineType: str,
  labels: z.record(z.string(), z.string()).nullish(),
  networkInterfaces: z.array(z.object({ accessConfigs: z.array(z.object({ natIP: str })).nullish() })).nullish(),
});
export type GcpInstance = z.infer<typeof Instance>;

const Operation = z.object({
  name: z.string(),
  status: z.string(),
  targetId: str,
  targetLink: str,
  error: z.object({ errors: z.array(z.object({ code: z.string().nullish(), message: z.string().nullish() })).nullish() }).nullish(),
});
export type GcpOperation = z.infer<typeof Operation>;

const Zone = z.object({ name: z.string(), region: str, status: str });
const Image = z.object({ selfLink: z.string() });
const Firewall = z.object({ name: z.string(), targetTags: z.array(z.string()).nullish() });
const Region = z.object({ quotas: z.array(z.object({ metric: z.string(), limit: z.number().nullish(), usage: z.number().nullish() })).nullish() });
/** One regional quota (`regions.get` → `quotas[]`). */
export type GcpQuota = { metric: string; limit: number; usage: number };
const AcceleratorScope = z.object({ acceleratorTypes: z.array(z.object({ name: z.string() })).nullish() });

/** At most this many `zoneOperations.wait` calls per wait (each returns at DONE or its deadline). */
const MAX_WAITS = 8;

/** No SDK retries, ever: a "not yet" or a 5xx goes back to Temporal's retry policy. */
const NO_RETRY = { retry: null, autoPaginate: false, timeout: 60_000 };

/** HTTP status of an SDK error, if it has one (404 gone / 409 exists are answers, not failures). */
function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const s = (err as { status?: unknown }).status;
  return typeof s === 'number' ? s : undefined;
}

async function call<T>(fn: () => Promise<T>, secrets: readonly string[]): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw redactError(classify(err), secrets);
  }
}

/** The credential values in a service-account key file, to redact from errors (the SDK reads the file itself). */
function keyFileSecrets(file: string | undefined): string[] {
  if (!file) return [];
  try {
    const k = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    return [k.private_key, k.private_key_id, k.client_secret, k.refresh_token].filter((v): v is string => typeof v === 'string');
  } catch {
    return [];
  }
}

/**
 * The failure a finished operation reports, classified; undefined while it runs or when it
 * succeeded. `RESOURCE_ALREADY_EXISTS` comes back alone, with that code (create adopts then).
 */
export function operationFailure(op: GcpOperation): ProviderError | undefined {
  if (op.status !== 'DONE') return undefined;
  const errors = (op.error?.errors ?? []).map((e) => ({ code: e.code ?? 'UNKNOWN', message: e.message ?? '' }));
  if (errors.length === 0) return undefined;
  const exists = errors.find((e) => e.code === 'RESOURCE_ALREADY_EXISTS');
  return redactError(classifyOperation(exists ? [exists] : errors));
}

let sdk: typeof ComputeSdk | undefined;

/**
 * @google-cloud/compute, loaded with the first ComputeApi rather than at import: every worker
 * imports this adapter (through the default registry), and only one configured for GCP should
 * carry the SDK (~130 MB of RSS).
 */
function computeSdk(): typeof ComputeSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose (see above)
  sdk ??= require('@google-cloud/compute') as typeof ComputeSdk;
  return sdk;
}

/** Compute Engine REST v1, reduced to the calls gpuprov makes. */
export class ComputeApi {
  readonly project: string;
  private readonly pageSize: number;
  private readonly instances: InstancesClient;
  private readonly zoneOps: ZoneOperationsClient;
  private readonly firewalls: FirewallsClient;
  private readonly images: ImagesClient;
  private readonly zones: ZonesClient;
  private readonly accelerators: AcceleratorTypesClient;
  private readonly regions: RegionsClient;

  /** Credential values to redact from every error this client lets out. */
  private readonly secrets: string[];

  constructor(opts: ComputeApiOptions) {
    this.project = opts.project;
    this.pageSize = opts.pageSize ?? 500;
    const options: NonNullable<ConstructorParameters<typeof InstancesClient>[0]> = { fallback: true, projectId: opts.project };
    if (opts.endpoint) {
      const u = new URL(opts.endpoint);
      options.apiEndpoint = u.hostname;
      options.port = Number(u.port || (u.protocol === 'http:' ? 80 : 443));
      options.protocol = u.protocol === 'http:' ? 'http' : 'https';
    }
    this.secrets = keyFileSecrets(opts.keyFilename);
    if (opts.keyFilename) options.keyFilename = opts.keyFilename;
    // A fixture endpoint without a key file: a placeholder API key stops the SDK from looking
    // for Application Default Credentials (it is sent as x-goog-api-key and means nothing).
    else if (opts.endpoint) options.apiKey = 'gpuprov-fixture-no-auth';
    if (options.apiKey) this.secrets.push(options.apiKey);
    const compute = computeSdk();
    this.instances = new compute.InstancesClient(options);
    this.zoneOps = new compute.ZoneOperationsClient(options);
    this.firewalls = new compute.FirewallsClient(options);
    this.images = new compute.ImagesClient(options);
    this.zones = new compute.ZonesClient(options);
    this.accelerators = new compute.AcceleratorTypesClient(options);
    this.regions = new compute.RegionsClient(options);
  }
  private call<T>(fn: () => Promise<T>): Promise<T> {
    return call(fn, this.secrets);
  }

  /** An OAuth access token of the same credentials (the Billing Catalog is read with it); none on a fixture endpoint. */
  async accessToken(): Promise<string | undefined> {
    return (await this.instances.auth.getAccessToken()) ?? undefined;
  }

  /** Every zone of the project (paginated). */
  async listZones(): Promise<z.infer<typeof Zone>[]> {
    return this.call(async () => {
      const out: z.infer<typeof Zone>[] = [];
      for await (const zone of this.zones.listAsync({ project: this.project, maxResults: this.pageSize }, NO_RETRY)) out.push(Zone.parse(zone));
      return out;
    });
  }

  /** zone name → accelerator type names offered there (one aggregatedList, paginated). */
  async acceleratorsByZone(): Promise<Map<string, Set<string>>> {
    return this.call(async () => {
      const out = new Map<string, Set<string>>();
      const it = this.accelerators.aggregatedListAsync({ project: this.project, maxResults: this.pageSize }, NO_RETRY);
      for await (const [scope, list] of it) {
        if (!scope.startsWith('zones/')) continue;
        const names = (AcceleratorScope.parse(list).acceleratorTypes ?? []).map((a) => a.name);
        out.set(scope.slice('zones/'.length), new Set(names));
      }
      return out;
    });
  }

  /** A region's quotas (`regions.get`): NVIDIA_*_GPUS and the rest, limit and usage. */
  async regionQuotas(region: string): Promise<GcpQuota[]> {
    return this.call(async () => {
      const r = Region.parse((await this.regions.get({ project: this.project, region }, NO_RETRY))[0]);
      return (r.quotas ?? []).map((q) => ({ metric: q.metric, limit: q.limit ?? 0, usage: q.usage ?? 0 }));
    });
  }

  /** The newest image of a family, as a selfLink. */
  async imageFromFamily(project: string, family: string): Promise<string> {
    return this.call(async () => Image.parse((await this.images.getFromFamily({ project, family }, NO_RETRY))[0]).selfLink);
  }

  /** The firewall rule, or undefined when it does not exist. */
  async getFirewall(name: string): Promise<z.infer<typeof Firewall> | undefined> {
    try {
      return Firewall.parse((await this.firewalls.get({ project: this.project, firewall: name }, NO_RETRY))[0]);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw redactError(classify(err), this.secrets);
    }
  }

  /** Every firewall rule of the project whose name starts with `prefix` (paginated; the caller checks ownership). */
  async listFirewalls(prefix: string): Promise<z.infer<typeof Firewall>[]> {
    return this.call(async () => {
      const out: z.infer<typeof Firewall>[] = [];
      const filter = `name eq "${prefix}.*"`;
      for await (const fw of this.firewalls.listAsync({ project: this.project, filter, maxResults: this.pageSize }, NO_RETRY)) out.push(Firewall.parse(fw));
      return out;
    });
  }

  /** Insert a firewall rule; an existing rule of that name (409) counts as done. No waiting. */
  async insertFirewall(body: Record<string, unknown>): Promise<void> {
    try {
      await this.firewalls.insert({ project: this.project, firewallResource: body }, NO_RETRY);
    } catch (err) {
      if (statusOf(err) === 409) return;
      throw redactError(classify(err), this.secrets);
    }
  }

  /** Delete a firewall rule; already gone (404) counts as done. No waiting. */
  async deleteFirewall(name: string): Promise<void> {
    try {
      await this.firewalls.delete({ project: this.project, firewall: name }, NO_RETRY);
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw redactError(classify(err), this.secrets);
    }
  }

  /**
   * `instances.insert` with a request id. Returns the operation, or `'exists'` when an instance
   * of that name is already in the zone (409 alreadyExists).
   */
  async insertInstance(zone: string, body: Record<string, unknown>, requestId: string): Promise<GcpOperation | 'exists'> {
    try {
      const [op] = await this.instances.insert({ project: this.project, zone, requestId, instanceResource: body }, NO_RETRY);
      return Operation.parse(op.latestResponse);
    } catch (err) {
      if (statusOf(err) === 409) return 'exists';
      throw redactError(classify(err), this.secrets);
    }
  }

  /** One `zoneOperations.get`. */
  async getZoneOperation(zone: string, operation: string): Promise<GcpOperation> {
    return this.call(async () => Operation.parse((await this.zoneOps.get({ project: this.project, zone, operation }, NO_RETRY))[0]));
  }

  /**
   * The zone operation once DONE, or as last seen when `budgetMs` runs out. `zoneOperations.wait`
   * blocks server-side until DONE or its own deadline (up to 2 min) and may return early, so at
   * most {@link MAX_WAITS} calls, each cut to what is left of the budget. A call cut short by our
   * timeout (a Transient error) ends the wait with one `get`: still running is an answer.
   */
  async waitZoneOperation(zone: string, operation: string, budgetMs: number): Promise<GcpOperation> {
    const deadline = Date.now() + budgetMs;
    for (let i = 0; i < MAX_WAITS; i++) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      let op: GcpOperation;
      try {
        op = Operation.parse((await this.zoneOps.wait({ project: this.project, zone, operation }, { ...NO_RETRY, timeout: left }))[0]);
      } catch (err) {
        const e = redactError(classify(err), this.secrets);
        if (e.kind !== 'Transient') throw e;
        break;
      }
      if (op.status === 'DONE') return op;
    }
    return this.getZoneOperation(zone, operation);
  }

  /** The instance by name or id, or undefined when it does not exist. */
  async getInstance(zone: string, instance: string): Promise<GcpInstance | undefined> {
    try {
      return Instance.parse((await this.instances.get({ project: this.project, zone, instance }, NO_RETRY))[0]);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw redactError(classify(err), this.secrets);
    }
  }

  /** Instances of a zone matching a Compute filter expression (paginated). */
  async listInstances(zone: string, filter: string): Promise<GcpInstance[]> {
    return this.call(async () => {
      const out: GcpInstance[] = [];
      for await (const inst of this.instances.listAsync({ project: this.project, zone, filter, maxResults: this.pageSize }, NO_RETRY))
        out.push(Instance.parse(inst));
      return out;
    });
  }

  /** Delete an instance by name or id; already gone (404) counts as done. No waiting. */
  async deleteInstance(zone: string, instance: string): Promise<void> {
    try {
      await this.instances.delete({ project: this.project, zone, instance }, NO_RETRY);
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw redactError(classify(err), this.secrets);
    }
  }
}
