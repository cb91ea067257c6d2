/**
 * GCP error classification: synchronous HTTP errors by status and `errors[].reason`,
 * long-running-operation errors by `error.errors[].code`.
 * Messages are the vendor's own text (Compute puts no credentials in them); the raw SDK
 * error is never attached, because its request config carries the auth headers.
 */
import { z } from 'zod';
import { ProviderError, type BlockScope, type ErrorKind } from '../../core/errors';

/** One entry of a Compute operation's `error.errors[]`. */
export interface OperationErrorItem {
  code: string;
  message: string;
}

const HttpErrorBody = z.object({
  error: z.object({
    code: z.number().optional(),
    message: z.string().optional(),
    status: z.string().optional(),
    errors: z.array(z.object({ reason: z.string().optional(), message: z.string().optional(), domain: z.string().optional() })).optional(),
    details: z.array(z.object({ reason: z.string().optional() }).loose()).optional(),
  }),
});
type HttpErrorBody = z.infer<typeof HttpErrorBody>;

type Rule = readonly [ErrorKind, BlockScope?];

/** Codes that mean the same as an operation's error and as a synchronous `errors[].reason`. */
const SHARED_CODES: Record<string, Rule> = {
  ZONE_RESOURCE_POOL_EXHAUSTED: ['Capacity', 'zone'],
  ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS: ['Capacity', 'zone'],
  QUOTA_EXCEEDED: ['Quota', 'region'],
  RESOURCE_NOT_FOUND: ['Unavailable', 'offer'],
  PERMISSIONS_ERROR: ['Credentials'],
  IAM_PERMISSION_DENIED: ['Credentials'],
  INVALID_FIELD_VALUE: ['InvalidRequest'],
  MISSING_REQUIRED_FIELD: ['InvalidRequest'],
  RESOURCE_ALREADY_EXISTS: ['InvalidRequest'],
};

/** Operation error codes (a failed insert's operation). */
const OPERATION_CODES: Record<string, Rule> = {
  ...SHARED_CODES,
  // SkyPilot blocks the zone on these two (preemption during create; per-zone operation rate).
  UNSUPPORTED_OPERATION: ['Capacity', 'zone'],
  RESOURCE_OPERATION_RATE_EXCEEDED: ['Capacity', 'zone'],
  // Transient in a synchronous answer, but an operation error is final for this requestId:
  // a retried insert with the same requestId returns the same failed operation. Move on instead.
  SERVICE_UNAVAILABLE_FOR_LOCATION: ['Capacity', 'zone'],
};

/** Synchronous `errors[].reason` values that decide before the HTTP status does. */
const HTTP_REASONS: Record<string, Rule> = {
  ...SHARED_CODES,
  rateLimitExceeded: ['Transient'],
  userRateLimitExceeded: ['Transient'],
  RATE_LIMIT_EXCEEDED: ['Transient'],
  quotaExceeded: ['Quota', 'region'],
  insufficientCapacity: ['Capacity', 'zone'],
  // The resource is busy with another operation (e.g. a delete already in flight).
  resourceNotReady: ['Transient'],
  SERVICE_UNAVAILABLE_FOR_LOCATION: ['Transient'],
  alreadyExists: ['InvalidRequest'],
};

/** gRPC status codes, for errors google-gax decodes itself (GoogleError). */
const GRPC_CODES: Record<number, Rule> = {
  3: ['InvalidRequest'],
  4: ['Transient'],
  5: ['Unavailable'],
  6: ['InvalidRequest'],
  7: ['Credentials'],
  8: ['Transient'],
  9: ['InvalidRequest'],
  13: ['Transient'],
  14: ['Transient'],
  16: ['Credentials'],
};

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'EPIPE', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE']);

// The vendor puts the global-vs-regional distinction only in the message text.
const GLOBAL_GPU_QUOTA = /'GPUS_ALL_REGIONS' exceeded/;
// "Location us-east9-z is not found or access is unauthorized": the zone itself is unusable.
const LOCATION_NOT_FOUND = /Location \S+ is not found/;
// Capacity messages, used only when an operation error carries a code we do not know.
const CAPACITY_TEXT = /does not have enough resources available|is currently unavailable in the \S+ zone/;

/**
 * A targeted launch's refusals by its reservation: code CONDITION_NOT_MET (an operation's; a
 * synchronous 400 `invalid` for an untargetable one), the reservation named only in the message
 * (messages as Compute writes them, matched by kubernetes/autoscaler's GCE client). Each is
 * Capacity for that reserved offer alone: the search goes on, nothing launches untargeted.
 */
const RESERVATION_REFUSALS: readonly RegExp[] = [
  /Specified reservation .* does not have available resources for the request/, // full
  /Specified reservations? .* do(es)? not exist/, // missing or deleted (expired)
  /No available resources in specified reservations/, // the instance does not fit it
  /requires reservation to be in READY state/, // still being created or updated
  /can not be targeted as specificReservationRequired is not set/, // not a specific reservation
];

function refine(rule: Rule, message: string): Rule {
  const [kind, block] = rule;
  if (RESERVATION_REFUSALS.some((r) => r.test(message))) return ['Capacity', 'offer'];
  if (kind === 'Quota' && GLOBAL_GPU_QUOTA.test(message)) return ['Quota', 'cloud'];
  if (kind === 'Unavailable' && LOCATION_NOT_FOUND.test(message)) return ['Unavailable', 'zone'];
  return [kind, block];
}

function make(rule: Rule, code: string, message: string, retryAfterMs?: number): ProviderError {
  const [kind, block] = refine(rule, message);
  return new ProviderError(kind, `gcp: ${code}: ${message}`, {
    code,
    ...(block === undefined ? {} : { block }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** Capacity codes that say the zone itself is unusable (any market), not that a type is sold out. */
const ZONE_WIDE_CAPACITY = new Set(['UNSUPPORTED_OPERATION', 'RESOURCE_OPERATION_RATE_EXCEEDED', 'SERVICE_UNAVAILABLE_FOR_LOCATION']);

// Spot VMs count against the PREEMPTIBLE_ twins of the CPU and GPU quotas ("Quota 'PREEMPTIBLE_NVIDIA_T4_GPUS' exceeded").
const SPOT_QUOTA = /'PREEMPTIBLE_[A-Z0-9_]+' exceeded/;

/**
 * A create's error for its offer's market: a spot stock-out (ZONE_RESOURCE_POOL_EXHAUSTED and the
 * like; Compute has no spot bid, so no "price too low") and a refusal of a PREEMPTIBLE_ quota block
 * only that spot offer, whose key carries `/spot`, so the zone's and region's on-demand offers stay
 * open. The same holds for a reserved offer's stock-out (its reservation, not the zone) and a
 * queued (flex-start) offer's, which also counts against the PREEMPTIBLE_ quotas. Anything else
 * is returned as it is.
 */
export function forMarket(err: unknown, market: string | undefined, queued = false): unknown {
  if ((market !== 'spot' && market !== 'reserved' && !queued) || !(err instanceof ProviderError)) return err;
  const stockOut = err.kind === 'Capacity' && !ZONE_WIDE_CAPACITY.has(err.code ?? '');
  const spotQuota = err.kind === 'Quota' && market !== 'reserved' && SPOT_QUOTA.test(err.message);
  if (!stockOut && !spotQuota) return err;
  const what = queued ? 'flex-start' : market === 'spot' ? 'spot' : 'reservation';
  return new ProviderError(err.kind, `${err.message} (${what})`, { block: 'offer', ...(err.code === undefined ? {} : { code: err.code }) });
}

/** Classify the errors of a finished Compute operation (first known code wins). */
export function classifyOperation(errors: OperationErrorItem[]): ProviderError {
  const known = errors.find((e) => OPERATION_CODES[e.code] !== undefined);
  if (known) return make(OPERATION_CODES[known.code]!, known.code, known.message);
  const first = errors[0] ?? { code: 'UNKNOWN', message: 'operation failed without error details' };
  if (CAPACITY_TEXT.test(first.message)) return make(['Capacity', 'zone'], first.code, first.message);
  return make(['Failed'], first.code, first.message);
}

function parseBody(err: Record<string, unknown>): HttpErrorBody | undefined {
  const response = err.response as { data?: unknown } | undefined;
  const candidates: unknown[] = [response?.data, err.message];
  for (const c of candidates) {
    let value = c;
    if (typeof c === 'string') {
      try {
        value = JSON.parse(c);
      } catch {
        continue;
      }
    }
    const parsed = HttpErrorBody.safeParse(value);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

function retryAfter(err: Record<string, unknown>): number | undefined {
  const headers = (err.response as { headers?: unknown } | undefined)?.headers;
  // gaxios hands back a fetch Headers object, not necessarily this realm's `Headers` class.
  const get = (headers as { get?: unknown } | undefined)?.get;
  const raw = typeof get === 'function' ? (get.call(headers, 'retry-after') as unknown) : undefined;
  if (typeof raw !== 'string' || !raw) return undefined;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function byStatus(status: number): Rule {
  if (status === 401) return ['Credentials'];
  if (status === 403) return ['Credentials'];
  if (status === 404) return ['Unavailable'];
  if (status === 408 || status === 429) return ['Transient'];
  if (status >= 500) return ['Transient'];
  return ['InvalidRequest'];
}

function classifyHttp(status: number, body: HttpErrorBody | undefined, retryAfterMs: number | undefined): ProviderError {
  const reasons = [...(body?.error.errors ?? []).map((e) => e.reason), ...(body?.error.details ?? []).map((d) => d.reason), body?.error.status];
  const message = body?.error.message ?? `HTTP ${status}`;
  const reason = reasons.find((r): r is string => r !== undefined && HTTP_REASONS[r] !== undefined);
  // 401 is always the credentials, whatever the reason says.
  if (status !== 401 && reason !== undefined) return make(HTTP_REASONS[reason]!, `${status} ${reason}`, message, retryAfterMs);
  const label = reasons.find((r): r is string => r !== undefined) ?? '';
  return make(byStatus(status), label ? `${status} ${label}` : String(status), message, retryAfterMs);
}

/**
 * Turn anything the SDK or api.ts throws into a {@link ProviderError}: operation errors by code,
 * HTTP errors by status and reason, network failures as Transient, missing ADC as Credentials.
 */
export function classify(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (typeof err !== 'object' || err === null) return new ProviderError('Failed', `gcp: ${String(err)}`);
  const e = err as Record<string, unknown>;
  const status = typeof e.status === 'number' ? e.status : (e.response as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number') return classifyHttp(status, parseBody(e), retryAfter(e));
  const message = typeof e.message === 'string' ? e.message : 'unknown error';
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return new ProviderError('Transient', `gcp: network: ${e.code}`, { code: e.code });
  if (typeof e.code === 'number' && GRPC_CODES[e.code] !== undefined) return make(GRPC_CODES[e.code]!, `grpc ${e.code}`, message);
  // google-auth-library gives no code when Application Default Credentials are missing.
  if (/Could not load the default credentials|Unable to detect a Project Id/.test(message)) {
    return new ProviderError(
      'Credentials',
      'gcp: no Application Default Credentials: set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`',
    );
  }
  if (e.name === 'ZodError') return new ProviderError('Failed', `gcp: unexpected response shape: ${message}`);
  return new ProviderError('Failed', `gcp: ${message}`);
}
