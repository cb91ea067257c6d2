import { ProviderError } from '../../core/errors';

/** gRPC status codes (google.rpc.Code) the adapter distinguishes. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** `google.protobuf.Any` as @grpc/proto-loader hands it out. */
export interface AnyMessage {
  type_url: string;
  value: Uint8Array;
}

/** A gRPC call error or a failed Operation's status, reduced to what classification needs. */
export interface NebiusFailure {
  code: number;
  message: string;
  details: AnyMessage[];
}

/** The `details` oneof case of `nebius.common.v1.ServiceError`, by field number. */
const SERVICE_ERROR_DETAIL: Record<number, string> = {
  100: 'bad_request',
  110: 'bad_resource_state',
  111: 'resource_not_found',
  112: 'resource_already_exists',
  113: 'out_of_range',
  120: 'permission_denied',
  130: 'resource_conflict',
  131: 'operation_aborted',
  140: 'too_many_requests',
  141: 'quota_failure',
  142: 'not_enough_resources',
  999: 'internal_error',
};

/** A decoded `nebius.common.v1.ServiceError` (only the fields we branch on). */
export interface ServiceErrorInfo {
  service: string;
  code: string;
  detail?: string;
  /** `resource_already_exists.resource_id` and friends: the first string of the detail message. */
  resourceId?: string;
}

type Field = { no: number; varint?: bigint; bytes?: Uint8Array };

/** Minimal protobuf wire reader: enough for Status, Any, ServiceError and RetryInfo. */
function readFields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++];
      if (b === undefined) throw new Error('truncated varint');
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    switch (key & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        i += 8;
        break;
      case 5:
        i += 4;
        break;
      case 2: {
        const len = Number(varint());
        out.push({ no, bytes: buf.subarray(i, i + len) });
        i += len;
        break;
      }
      default:
        throw new Error('unsupported wire type');
    }
  }
  return out;
}

const text = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('utf8') : '');

/** Decode the `details` of a serialized `google.rpc.Status` (the `grpc-status-details-bin` trailer). */
export function decodeStatusDetails(buf: Uint8Array): AnyMessage[] {
  try {
    return readFields(buf)
      .filter((f) => f.no === 3 && f.bytes)
      .map((f) => {
        const any = readFields(f.bytes!);
        return { type_url: text(any.find((x) => x.no === 1)?.bytes), value: any.find((x) => x.no === 2)?.bytes ?? new Uint8Array() };
      });
  } catch {
    return [];
  }
}

/** The first `nebius.common.v1.ServiceError` among the details, if any. */
export function serviceError(details: AnyMessage[]): ServiceErrorInfo | undefined {
  const any = details.find((d) => d.type_url.endsWith('/nebius.common.v1.ServiceError'));
  if (!any) return undefined;
  try {
    const fields = readFields(any.value);
    const info: ServiceErrorInfo = { service: text(fields.find((f) => f.no === 1)?.bytes), code: text(fields.find((f) => f.no === 2)?.bytes) };
    const d = fields.find((f) => SERVICE_ERROR_DETAIL[f.no] !== undefined);
    if (d) {
      info.detail = SERVICE_ERROR_DETAIL[d.no];
      const id = d.bytes ? readFields(d.bytes).find((f) => f.no === 1 && f.bytes) : undefined;
      if (id?.bytes) info.resourceId = text(id.bytes);
    }
    return info;
  } catch {
    return undefined;
  }
}

/** `google.rpc.RetryInfo.retry_delay` in ms, when the server sent one. */
export function retryDelayMs(details: AnyMessage[]): number | undefined {
  const any = details.find((d) => d.type_url.endsWith('/google.rpc.RetryInfo'));
  if (!any) return undefined;
  try {
    const delay = readFields(any.value).find((f) => f.no === 1)?.bytes;
    if (!delay) return undefined;
    const d = readFields(delay);
    const seconds = Number(d.find((f) => f.no === 1)?.varint ?? 0n);
    const nanos = Number(d.find((f) => f.no === 2)?.varint ?? 0n);
    return seconds * 1000 + Math.round(nanos / 1e6);
  } catch {
    return undefined;
  }
}

/** Reduce a @grpc/grpc-js call error (`{ code, details, metadata }`) to a {@link NebiusFailure}. */
export function fromGrpcError(err: unknown): NebiusFailure | undefined {
  if (typeof err !== 'object' || err === null || typeof (err as { code?: unknown }).code !== 'number') return undefined;
  const e = err as { code: number; details?: unknown; message?: unknown; metadata?: { get(k: string): unknown[] } };
  const raw = e.metadata?.get('grpc-status-details-bin')[0];
  const details = raw instanceof Uint8Array ? decodeStatusDetails(raw) : [];
  const message = typeof e.details === 'string' ? e.details : typeof e.message === 'string' ? e.message : '';
  return { code: e.code, message, details };
}

const CODE_NAME = Object.fromEntries(Object.entries(GrpcCode).map(([k, v]) => [v, k])) as Record<number, string>;

/**
 * Map a Nebius gRPC failure (a call error or a failed Operation status) to a {@link ProviderError}.
 * The `ServiceError` detail decides first (quota vs capacity vs rate limit); the gRPC code second.
 */
export function classify(err: unknown, what = 'nebius call'): ProviderError {
  if (err instanceof ProviderError) return err;
  const f = isFailure(err) ? err : fromGrpcError(err);
  if (!f) return new ProviderError('Transient', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  const se = serviceError(f.details);
  const code = se?.code ? `${CODE_NAME[f.code] ?? f.code}/${se.code}` : (CODE_NAME[f.code] ?? String(f.code));
  const msg = `${what}: ${code}: ${f.message}`;
  const retryAfterMs = retryDelayMs(f.details);
  const opts = { code, cause: f, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  switch (se?.detail) {
    case 'quota_failure':
      return new ProviderError('Quota', msg, { ...opts, block: 'region' });
    case 'not_enough_resources':
      return new ProviderError('Capacity', msg, opts);
    case 'too_many_requests':
      return new ProviderError('Transient', msg, opts);
    case 'bad_resource_state':
    case 'resource_conflict':
    case 'operation_aborted':
      return new ProviderError('Transient', msg, opts);
    case 'bad_request':
      return new ProviderError('InvalidRequest', msg, opts);
    default:
      break;
  }
  switch (f.code) {
    case GrpcCode.RESOURCE_EXHAUSTED:
      // No ServiceError detail: the only hint is the text (dstack maps "Quota limit exceeded" here).
      if (/quota/i.test(f.message)) return new ProviderError('Quota', msg, { ...opts, block: 'region' });
      return new ProviderError('Capacity', msg, opts);
    case GrpcCode.UNAUTHENTICATED:
    case GrpcCode.PERMISSION_DENIED:
      return new ProviderError('Credentials', `${msg} (check NEBIUS_SERVICE_ACCOUNT_FILE or NEBIUS_IAM_TOKEN, and the project's access rights)`, opts);
    case GrpcCode.INVALID_ARGUMENT:
    case GrpcCode.OUT_OF_RANGE:
    case GrpcCode.NOT_FOUND:
    case GrpcCode.ALREADY_EXISTS:
    case GrpcCode.UNIMPLEMENTED:
      return new ProviderError('InvalidRequest', msg, opts);
    case GrpcCode.FAILED_PRECONDITION:
      return new ProviderError('Failed', msg, opts);
    default:
      // CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, ABORTED, INTERNAL, UNAVAILABLE and anything new.
      return new ProviderError('Transient', msg, opts);
  }
}

function isFailure(x: unknown): x is NebiusFailure {
  return typeof x === 'object' && x !== null && 'code' in x && 'details' in x && Array.isArray((x as { details: unknown }).details);
}
