import { ZodError } from 'zod';
import { ProviderError, isProviderError } from '../../errors';
import { RunPodHttpError } from './api';

/** Parse an HTTP Retry-After (delta seconds or HTTP date) into milliseconds. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** RFC 9457 problem JSON: `{title, status, detail, errors?}`; v1 used `{message}`. */
function problemText(body: unknown): string | undefined {
  if (typeof body === 'string') return body.slice(0, 200);
  if (typeof body !== 'object' || body === null) return undefined;
  const { detail, title, message } = body as { detail?: unknown; title?: unknown; message?: unknown };
  for (const v of [detail, title, message]) if (typeof v === 'string' && v) return v;
  return undefined;
}

/**
 * RunPod → taxonomy by HTTP status (v2 has no machine-readable codes). On create, 400 is the
 * capacity answer ("no longer any instances available") and 403 means this account cannot use
 * the pool (skip the offer); elsewhere 403 is a key without scope.
 */
export function classify(err: unknown): ProviderError {
  if (isProviderError(err)) return err;
  if (err instanceof RunPodHttpError) {
    const text = `RunPod: ${problemText(err.body) ?? `HTTP ${err.status}`}`;
    const opts = { code: String(err.status), cause: err };
    const s = err.status;
    if (s === 429) {
      const ms = retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', text, { ...opts, ...(ms === undefined ? {} : { retryAfterMs: ms }) });
    }
    if (s >= 500) return new ProviderError('Transient', text, opts);
    if (s === 401) return new ProviderError('Credentials', text, opts);
    if (s === 403) return err.op === 'create' ? new ProviderError('Unavailable', text, opts) : new ProviderError('Credentials', text, opts);
    // Insufficient balance: no offer of this cloud can start until the account is topped up.
    if (s === 402) return new ProviderError('Quota', text, { ...opts, block: 'cloud' });
    if (s === 400 && err.op === 'create') return new ProviderError('Capacity', text, opts);
    return new ProviderError('InvalidRequest', text, opts);
  }
  if (err instanceof ZodError) return new ProviderError('Failed', 'RunPod: unexpected response shape', { code: 'bad-response', cause: err });
  const msg = err instanceof Error ? err.message : String(err);
  return new ProviderError('Transient', `RunPod: network error: ${msg}`, { code: 'network', cause: err });
}

export function isNotFound(err: unknown): boolean {
  return err instanceof RunPodHttpError && err.status === 404;
}
