import { ZodError } from 'zod';
import { ProviderError, isProviderError } from '../../errors';
import { PrimeHttpError } from './api';

/** Parse an HTTP Retry-After (delta seconds or HTTP date) into milliseconds. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Errors carry `message`, `error` or `detail` (a string, or FastAPI's validation list). */
export function errorText(body: unknown): string | undefined {
  if (typeof body === 'string') return body.slice(0, 300);
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as { message?: unknown; error?: unknown; detail?: unknown };
  for (const v of [b.detail, b.message, b.error]) {
    if (typeof v === 'string' && v) return v;
    if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' && x !== null && 'msg' in x ? String((x as { msg: unknown }).msg) : String(x))).join('; ');
  }
  return undefined;
}

// Prime Intellect documents no capacity or quota codes: its own CLI reads the text, so do we.
const QUOTA = /quota exceeded|limit exceeded|insufficient (?:balance|funds|credits?)/i;
const CAPACITY = /capacity|out of stock|unavailable|insufficient|not available|no longer available/i;

export function classify(err: unknown): ProviderError {
  if (isProviderError(err)) return err;
  if (err instanceof PrimeHttpError) {
    const detail = errorText(err.body);
    const text = `Prime Intellect: ${detail ?? `HTTP ${err.status}`}`;
    const opts = { code: String(err.status), cause: err };
    const s = err.status;
    if (s === 429) {
      const ms = retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', text, { ...opts, ...(ms === undefined ? {} : { retryAfterMs: ms }) });
    }
    if (s >= 500) return new ProviderError('Transient', text, opts);
    if (s === 401 || s === 403) return new ProviderError('Credentials', text, opts);
    if (s === 402) return new ProviderError('Quota', text, { ...opts, block: 'cloud' });
    if (s === 422) return new ProviderError('InvalidRequest', text, opts);
    // Pod limits and balance are account-wide: block the whole cloud.
    if (detail && QUOTA.test(detail)) return new ProviderError('Quota', text, { ...opts, block: 'cloud' });
    if (detail && CAPACITY.test(detail)) return new ProviderError('Capacity', text, opts);
    return new ProviderError('InvalidRequest', text, opts);
  }
  if (err instanceof ZodError) return new ProviderError('Failed', 'Prime Intellect: unexpected response shape', { code: 'bad-response', cause: err });
  const msg = err instanceof Error ? err.message : String(err);
  return new ProviderError('Transient', `Prime Intellect: network error: ${msg}`, { code: 'network', cause: err });
}

export function isNotFound(err: unknown): boolean {
  return err instanceof PrimeHttpError && err.status === 404;
}

/** A POST /ssh_keys refused because the name or key already exists. */
export function isConflict(err: unknown): boolean {
  return err instanceof PrimeHttpError && (err.status === 409 || (err.status === 400 && /already exists|duplicate/i.test(errorText(err.body) ?? '')));
}
