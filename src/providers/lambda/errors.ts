import { ZodError } from 'zod';
import { ProviderError, isProviderError, type ErrorKind, type ProviderErrorOptions } from '../../errors';
import { LambdaHttpError } from './api';

/** Parse an HTTP Retry-After (delta seconds or HTTP date) into milliseconds. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Lambda's error envelope: `{"error": {"code", "message", "suggestion"?}}`. */
function vendorError(body: unknown): { code?: string; message?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const e = (body as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return {};
  const { code, message } = e as { code?: unknown; message?: unknown };
  return { ...(typeof code === 'string' ? { code } : {}), ...(typeof message === 'string' ? { message } : {}) };
}

/** Vendor codes from the v1 spec's ApiError schemas → kind (and block scope where it differs). */
const CODES: Record<string, { kind: ErrorKind; block?: ProviderErrorOptions['block'] }> = {
  'instance-operations/launch/insufficient-capacity': { kind: 'Capacity' },
  'global/quota-exceeded': { kind: 'Quota', block: 'region' },
  'provider/quota-exceeded': { kind: 'Quota', block: 'region' },
  'global/invalid-parameters': { kind: 'InvalidRequest' },
  'global/object-does-not-exist': { kind: 'InvalidRequest' },
  'instance-operations/launch/file-system-in-wrong-region': { kind: 'InvalidRequest' },
  'global/invalid-api-key': { kind: 'Credentials' },
  'global/account-inactive': { kind: 'Credentials' },
  'global/invalid-billing-address': { kind: 'Credentials' },
  'provider/internal-unavailable': { kind: 'Transient' },
};

/** Any error from the Lambda adapter → the one taxonomy. Messages never carry the API key. */
export function classify(err: unknown): ProviderError {
  if (isProviderError(err)) return err;
  if (err instanceof LambdaHttpError) {
    const { code, message } = vendorError(err.body);
    const text = `Lambda: ${message ?? `HTTP ${err.status}`}${code ? ` (${code})` : ''}`;
    const opts = { code: code ?? String(err.status), cause: err };
    if (err.status === 429) {
      const ms = retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', text, { ...opts, ...(ms === undefined ? {} : { retryAfterMs: ms }) });
    }
    const known = code === undefined ? undefined : CODES[code];
    if (known) return new ProviderError(known.kind, text, { ...opts, ...(known.block ? { block: known.block } : {}) });
    if (err.status >= 500) return new ProviderError('Transient', text, opts);
    if (err.status === 401 || err.status === 403) return new ProviderError('Credentials', text, opts);
    return new ProviderError('InvalidRequest', text, opts);
  }
  if (err instanceof ZodError) return new ProviderError('Failed', 'Lambda: unexpected response shape', { code: 'bad-response', cause: err });
  // undici network errors (refused, reset, timeouts): the call may be retried.
  const msg = err instanceof Error ? err.message : String(err);
  return new ProviderError('Transient', `Lambda: network error: ${msg}`, { code: 'network', cause: err });
}

/** True when the error is Lambda's "no such object" (gone = success for delete). */
export function isNotFound(err: unknown): boolean {
  return err instanceof LambdaHttpError && (err.status === 404 || vendorError(err.body).code === 'global/object-does-not-exist');
}

/** True when a POST /ssh-keys clashed with an existing name. */
export function isDuplicate(err: unknown): boolean {
  return err instanceof LambdaHttpError && vendorError(err.body).code === 'global/duplicate';
}
