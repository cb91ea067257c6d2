/**
 * The shared half of every HTTP adapter's `classify`: throttling, server errors, refused keys,
 * unexpected shapes and network failures. Each cloud's `errors.ts` supplies what is its own: how
 * to read its error envelope, its literal vendor-code table and its status/message rules.
 */
import { ZodError } from 'zod';
import { ProviderError, isProviderError, type ErrorKind, type ProviderErrorOptions } from '../core/errors';
import { HttpError } from './http';

/** Parse an HTTP Retry-After (delta seconds or HTTP date) into milliseconds (never negative). */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A vendor's reading of one error: the kind, and the block scope where it differs from the default. */
export interface Verdict {
  kind: ErrorKind;
  block?: ProviderErrorOptions['block'];
}

/** What the vendor's error envelope says: its machine code (if any) and its human text (if any). */
export interface VendorSays {
  code?: string;
  text?: string;
}

/** One vendor's part of the classification. */
export interface HttpRules {
  /** Message prefix (`Lambda`, `hyperstack`). */
  vendor: string;
  /** Read the vendor's error envelope. */
  read(err: HttpError): VendorSays;
  /** The literal vendor-code table: consulted right after 429, before every status default. */
  codes?: Readonly<Record<string, Verdict>>;
  /** Rules by status, op or message: consulted after 5xx, before 401/403 and the InvalidRequest default. */
  rules?(err: HttpError, says: VendorSays): Verdict | undefined;
  /** What to check when a key is refused (`LAMBDA_API_KEY`); appended to Credentials messages. */
  credentials?: string;
  /** How long a 429 asks to wait; default: its Retry-After. */
  waitMs?(err: HttpError): number | undefined;
}

/**
 * Any error from an HTTP adapter → the one taxonomy. Order: 429 → Transient (with retryAfterMs);
 * the vendor's code table; 5xx → Transient; the vendor's rules; 401/403 → Credentials; any other
 * HTTP error → InvalidRequest. A ZodError is Failed (`bad-response`: the API answered something
 * this adapter does not understand, and asking again will not change that); anything else is a
 * network failure (Transient). Messages carry the vendor's text, never request headers.
 */
export function classifyHttp(err: unknown, r: HttpRules): ProviderError {
  if (isProviderError(err)) return err;
  if (err instanceof HttpError) {
    const says = r.read(err);
    const code = says.code ?? String(err.status);
    const text = `${r.vendor} ${err.op}: HTTP ${err.status}${says.text ? `: ${says.text}` : ''}${says.code ? ` (${says.code})` : ''}`;
    const make = (v: Verdict): ProviderError =>
      new ProviderError(v.kind, v.kind === 'Credentials' && r.credentials ? `${text} (check ${r.credentials})` : text, {
        code,
        ...(v.block ? { block: v.block } : {}),
        cause: err,
      });
    if (err.status === 429) {
      const ms = r.waitMs ? r.waitMs(err) : retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', text, { code, ...(ms === undefined ? {} : { retryAfterMs: ms }), cause: err });
    }
    const known = says.code === undefined ? undefined : r.codes?.[says.code];
    if (known) return make(known);
    if (err.status >= 500) return make({ kind: 'Transient' });
    const ruled = r.rules?.(err, says);
    if (ruled) return make(ruled);
    if (err.status === 401 || err.status === 403) return make({ kind: 'Credentials' });
    return make({ kind: 'InvalidRequest' });
  }
  if (err instanceof ZodError) {
    return new ProviderError('Failed', `${r.vendor}: unexpected response shape (${err.message.slice(0, 200)})`, { code: 'bad-response', cause: err });
  }
  // undici network errors (refused, reset, timeouts): the call may be retried.
  const c = (err as { code?: unknown } | null)?.code;
  const msg = err instanceof Error ? err.message : String(err);
  return new ProviderError('Transient', `${r.vendor}: network error: ${msg}`, { code: typeof c === 'string' ? c : 'network', cause: err });
}

/** Wraps a call so that whatever it throws leaves as `classify(err)`. */
export function guardWith(classify: (err: unknown) => ProviderError): <T>(f: () => Promise<T>) => Promise<T> {
  return async <T>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (err) {
      throw classify(err);
    }
  };
}

/** The vendor's text from the first of `keys` that holds a non-empty string (bodies that are plain text are the text). */
export function textField(body: unknown, keys: readonly string[], max = 300): string | undefined {
  if (typeof body === 'string') return body ? body.slice(0, max) : undefined;
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  for (const k of keys) {
    const v = b[k];
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}
