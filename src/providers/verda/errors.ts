import { ZodError } from 'zod';
import { ProviderError } from '../../errors';

/** A non-2xx answer from the Verda API; carries the parsed `{code, message}` body, never request headers or the secret. */
export class VerdaHttpError extends Error {
  constructor(
    readonly op: string,
    readonly status: number,
    readonly body: unknown,
    readonly retryAfter?: string,
  ) {
    super(`verda ${op}: HTTP ${status}`);
    this.name = 'VerdaHttpError';
  }
}

export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function vendorError(body: unknown): { code?: string; message: string } {
  if (typeof body === 'string') return { message: body };
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  return { ...(typeof b.code === 'string' ? { code: b.code } : {}), message: typeof b.message === 'string' ? b.message : '' };
}

/** Delete answers that mean "already gone" (the API has no code for them). */
export const ALREADY_GONE = /invalid instance id|can't discontinue a discontinued instance|not found/i;
const NOT_YET = /can't discontinue a (provisioning|ordered|new) instance/i;
// No capacity code exists; on create, an invalid_request with this wording is the sold-out answer.
const CAPACITY = /capacity|not enough resources|no (longer )?available|unavailable|out of stock|sold out/i;

/** Map any error from the Verda API layer to the one taxonomy; `op` = the primitive. */
export function classify(err: unknown, op?: 'create'): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof VerdaHttpError) {
    const { code = String(err.status), message } = vendorError(err.body);
    const text = `${err.message}${message ? `: ${message}` : ''}`;
    if (err.status === 429) {
      const ms = retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', text, { code, ...(ms === undefined ? {} : { retryAfterMs: ms }), cause: err });
    }
    if (err.status >= 500 || code === 'server_error' || code === 'service_unavailable') return new ProviderError('Transient', text, { code, cause: err });
    if (NOT_YET.test(message)) return new ProviderError('Transient', text, { code, cause: err });
    if (code === 'insufficient_funds' || err.status === 402) return new ProviderError('Quota', text, { code, block: 'cloud', cause: err });
    if (err.status === 401 || err.status === 403 || code === 'unauthorized_request') {
      return new ProviderError('Credentials', `${text} (check VERDA_CLIENT_ID and VERDA_CLIENT_SECRET)`, { code, cause: err });
    }
    if (op === 'create' && CAPACITY.test(message)) return new ProviderError('Capacity', text, { code, cause: err });
    return new ProviderError('InvalidRequest', text, { code, cause: err });
  }
  if (err instanceof ZodError) return new ProviderError('Failed', `verda: unexpected response shape (${err.message.slice(0, 200)})`, { code: 'bad-response', cause: err });
  const code = (err as { code?: unknown } | null)?.code;
  return new ProviderError('Transient', `verda: network error${typeof code === 'string' ? ` ${code}` : ''}`, { ...(typeof code === 'string' ? { code } : {}), cause: err });
}
