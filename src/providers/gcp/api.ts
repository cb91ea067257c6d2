/**
 * The only file that talks to Compute Engine, through `@google-cloud/compute` in REST mode
 * (`fallback: true`). Every response is zod-parsed; every SDK retry is switched off
 * (Temporal retries, adapters do not). Errors leave as ProviderError via `classify`. The SDK's
 * clients and the credentials to redact are set up in ./compute-clients.ts.
 */
import { z } from 'zod';
import type { ProviderError } from '../../core/errors';
import { redactError } from '../redact';
import { computeClients, NO_RETRY, statusOf, type ComputeApiOptions, type ComputeClients } from './compute-clients';
import { classify, classifyOperation } from './errors';
import { PREEMPTED_FILTER, type PreemptedOp } from './preemption';

export type { ComputeApiOptions } from './compute-clients';

const str = z.string().nullish();

const Instance = z.object({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  statusMessage: str,
  zone: str,
  machineType: str,
  labels: z.record(z.string(), z.string()).nullish(),
  scheduling: z.object({ provisioningModel: str }).nullish(),
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

/** A `compute.instances.preempted` operation, as much as src/providers/gcp/preemption.ts reads. */
const Preempted = z.object({ targetId: str, targetLink: str, insertTime: str, status: str, statusMessage: str });

const Zone = z.object({ name: z.string(), region: str, status: str });
const Image = z.object({ selfLink: z.string() });
const Firewall = z.object({ name: z.string(), targetTags: z.array(z.string()).nullish() });
const Region = z.object({ quotas: z.array(z.object({ metric: z.string(), limit: z.number().nullish(), usage: z.number().nullish() })).nullish() });
/** One regional quota (`regions.get` → `quotas[]`). */
export type GcpQuota = { metric: string; limit: number; usage: number };
const OperationScope = z.object({ operations: z.array(z.unknown()).nullish() });
/** int64 fields arrive as decimal strings. */
const int64 = z.union([z.string(), z.number()]).nullish();
const Accelerator = z.object({ acceleratorType: str, acceleratorCount: z.number().nullish() });
const Reserved = z.object({ machineType: str, guestAccelerators: z.array(Accelerator).nullish(), localSsds: z.array(z.unknown()).nullish() });
const Specific = z.object({ count: int64, inUseCount: int64, instanceProperties: Reserved.nullish() });
/** A reservation, as much as ./reservations.ts reads of it. */
const Reservation = z.object({
  name: z.string(),
  zone: str,
  status: str,
  specificReservationRequired: z.boolean().nullish(),
  deleteAtTime: str,
  specificReservation: Specific.nullish(),
});
export type GcpReservation = z.infer<typeof Reservation>;
const ReservationScope = z.object({ reservations: z.array(z.unknown()).nullish() });
const AcceleratorScope = z.object({ acceleratorTypes: z.array(z.object({ name: z.string() })).nullish() });

/** At most this many `zoneOperations.wait` calls per wait (each returns at DONE or its deadline). */
const MAX_WAITS = 8;

async function call<T>(fn: () => Promise<T>, secrets: readonly string[]): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw redactError(classify(err), secrets);
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

/** Compute Engine REST v1, reduced to the calls gpuprov makes. */
export class ComputeApi {
  readonly project: string;
  private readonly pageSize: number;
  /** The SDK clients, and the credential values to redact from every error they let out. */
  private readonly c: ComputeClients;

  constructor(opts: ComputeApiOptions) {
    this.project = opts.project;
    this.pageSize = opts.pageSize ?? 500;
    this.c = computeClients(opts);
  }

  private call<T>(fn: () => Promise<T>): Promise<T> {
    return call(fn, this.c.secrets);
  }

  /** An OAuth access token of the same credentials (the Billing Catalog is read with it); none on a fixture endpoint. */
  async accessToken(): Promise<string | undefined> {
    return (await this.c.instances.auth.getAccessToken()) ?? undefined;
  }

  /** Every zone of the project (paginated). */
  async listZones(): Promise<z.infer<typeof Zone>[]> {
    return this.call(async () => {
      const out: z.infer<typeof Zone>[] = [];
      for await (const zone of this.c.zones.listAsync({ project: this.project, maxResults: this.pageSize }, NO_RETRY)) out.push(Zone.parse(zone));
      return out;
    });
  }

  /** zone name → accelerator type names offered there (one aggregatedList, paginated). */
  async acceleratorsByZone(): Promise<Map<string, Set<string>>> {
    return this.call(async () => {
      const out = new Map<string, Set<string>>();
      const it = this.c.accelerators.aggregatedListAsync({ project: this.project, maxResults: this.pageSize }, NO_RETRY);
      for await (const [scope, list] of it) {
        if (!scope.startsWith('zones/')) continue;
        const names = (AcceleratorScope.parse(list).acceleratorTypes ?? []).map((a) => a.name);
        out.set(scope.slice('zones/'.length), new Set(names));
      }
      return out;
    });
  }

  /** Every reservation of the project, in every zone (one `reservations.aggregatedList`, paginated). */
  async reservations(): Promise<GcpReservation[]> {
    return this.call(async () => {
      const out: GcpReservation[] = [];
      for await (const [scope, list] of this.c.reservations.aggregatedListAsync({ project: this.project, maxResults: this.pageSize }, NO_RETRY)) {
        if (scope.startsWith('zones/')) for (const r of ReservationScope.parse(list).reservations ?? []) out.push(Reservation.parse(r));
      }
      return out;
    });
  }

  /** A region's quotas (`regions.get`): NVIDIA_*_GPUS and the rest, limit and usage. */
  async regionQuotas(region: string): Promise<GcpQuota[]> {
    return this.call(async () => {
      const r = Region.parse((await this.c.regions.get({ project: this.project, region }, NO_RETRY))[0]);
      return (r.quotas ?? []).map((q) => ({ metric: q.metric, limit: q.limit ?? 0, usage: q.usage ?? 0 }));
    });
  }

  /** The newest image of a family, as a selfLink. */
  async imageFromFamily(project: string, family: string): Promise<string> {
    return this.call(async () => Image.parse((await this.c.images.getFromFamily({ project, family }, NO_RETRY))[0]).selfLink);
  }

  /** The firewall rule, or undefined when it does not exist. */
  async getFirewall(name: string): Promise<z.infer<typeof Firewall> | undefined> {
    try {
      return Firewall.parse((await this.c.firewalls.get({ project: this.project, firewall: name }, NO_RETRY))[0]);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw redactError(classify(err), this.c.secrets);
    }
  }

  /** Every firewall rule of the project whose name starts with `prefix` (paginated; the caller checks ownership). */
  async listFirewalls(prefix: string): Promise<z.infer<typeof Firewall>[]> {
    return this.call(async () => {
      const out: z.infer<typeof Firewall>[] = [];
      const filter = `name eq "${prefix}.*"`;
      for await (const fw of this.c.firewalls.listAsync({ project: this.project, filter, maxResults: this.pageSize }, NO_RETRY)) out.push(Firewall.parse(fw));
      return out;
    });
  }

  /** Insert a firewall rule; an existing rule of that name (409) counts as done. No waiting. */
  async insertFirewall(body: Record<string, unknown>): Promise<void> {
    try {
      await this.c.firewalls.insert({ project: this.project, firewallResource: body }, NO_RETRY);
    } catch (err) {
      if (statusOf(err) === 409) return;
      throw redactError(classify(err), this.c.secrets);
    }
  }

  /** Delete a firewall rule; already gone (404) counts as done. No waiting. */
  async deleteFirewall(name: string): Promise<void> {
    try {
      await this.c.firewalls.delete({ project: this.project, firewall: name }, NO_RETRY);
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw redactError(classify(err), this.c.secrets);
    }
  }

  /**
   * `instances.insert` with a request id. Returns the operation, or `'exists'` when an instance
   * of that name is already in the zone (409 alreadyExists).
   */
  async insertInstance(zone: string, body: Record<string, unknown>, requestId: string): Promise<GcpOperation | 'exists'> {
    try {
      const [op] = await this.c.instances.insert({ project: this.project, zone, requestId, instanceResource: body }, NO_RETRY);
      return Operation.parse(op.latestResponse);
    } catch (err) {
      if (statusOf(err) === 409) return 'exists';
      throw redactError(classify(err), this.c.secrets);
    }
  }

  /** One `zoneOperations.get`. */
  async getZoneOperation(zone: string, operation: string): Promise<GcpOperation> {
    return this.call(async () => Operation.parse((await this.c.zoneOps.get({ project: this.project, zone, operation }, NO_RETRY))[0]));
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
        op = Operation.parse((await this.c.zoneOps.wait({ project: this.project, zone, operation }, { ...NO_RETRY, timeout: left }))[0]);
      } catch (err) {
        const e = redactError(classify(err), this.c.secrets);
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
      return Instance.parse((await this.c.instances.get({ project: this.project, zone, instance }, NO_RETRY))[0]);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw redactError(classify(err), this.c.secrets);
    }
  }

  /** Instances of a zone matching a Compute filter expression (paginated). */
  async listInstances(zone: string, filter: string): Promise<GcpInstance[]> {
    return this.call(async () => {
      const out: GcpInstance[] = [];
      for await (const inst of this.c.instances.listAsync({ project: this.project, zone, filter, maxResults: this.pageSize }, NO_RETRY))
        out.push(Instance.parse(inst));
      return out;
    });
  }

  /** The zone's `compute.instances.preempted` operations (`zoneOperations.list`, paginated). */
  async zonePreemptions(zone: string): Promise<PreemptedOp[]> {
    return this.call(async () => {
      const out: PreemptedOp[] = [];
      const it = this.c.zoneOps.listAsync({ project: this.project, zone, filter: PREEMPTED_FILTER, maxResults: this.pageSize }, NO_RETRY);
      for await (const op of it) out.push({ zone, ...Preempted.parse(op) });
      return out;
    });
  }

  /** Every zone's `compute.instances.preempted` operations in one `globalOperations.aggregatedList` (paginated). */
  async preemptions(): Promise<PreemptedOp[]> {
    return this.call(async () => {
      const out: PreemptedOp[] = [];
      const it = this.c.globalOps.aggregatedListAsync({ project: this.project, filter: PREEMPTED_FILTER, maxResults: this.pageSize }, NO_RETRY);
      for await (const [scope, list] of it) {
        if (!scope.startsWith('zones/')) continue;
        const zone = scope.slice('zones/'.length);
        for (const op of OperationScope.parse(list).operations ?? []) out.push({ zone, ...Preempted.parse(op) });
      }
      return out;
    });
  }

  /** Delete an instance by name or id; already gone (404) counts as done. No waiting. */
  async deleteInstance(zone: string, instance: string): Promise<void> {
    try {
      await this.c.instances.delete({ project: this.project, zone, instance }, NO_RETRY);
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw redactError(classify(err), this.c.secrets);
    }
  }
}
