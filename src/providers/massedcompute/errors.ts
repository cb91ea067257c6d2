import { ZodError } from 'zod';
import { ProviderError } from '../../errors';

/** A non-2xx answer from the Massed Compute API; carries the parsed body, never request headers. */
export class MassedHttpError extends Error {
  constructor(
    readonly op: string,
    readonly status: number,
    readonly body: unknown,
    readonly retryAfter?: string,
  ) {
    super(`massedcompute ${op}: HTTP ${status}`);
    this.name = 'MassedHttpError';
  }
}

export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function messageOf(body: unknown): string {
  if (typeof body === 'string') return body;
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  for (const k of ['message', 'error', 'detail', 'response']) if (typeof b[k] === 'string') return b[k];
  return '';
}

// The API documents no error schema or codes: the message text is all there is.
const CAPACITY = /capacity|out of stock|sold out|no (gpus?|instances?) available/i;
const QUOTA = /quota|limit exceeded|insufficient (balance|funds|credit)/i;

/** Map any error from the Massed Compute API layer to the one taxonomy. */
export function classify(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof MassedHttpError) {
    const message = messageOf(err.body);
    const code = String(err.status);
    const text = `${err.message}${message ? `: ${message}` : ''}`;
    if (err.status === 429) {
      const ms = retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', text, { code, ...(ms === undefined ? {} : { retryAfterMs: ms }), cause: err });
    }
    if (err.status >= 500) return new ProviderError('Transient', text, { code, cause: err });
    if (err.status === 401 || err.status === 403) return new ProviderError('Credentials', `${text} (check MASSED_COMPUTE_API_KEY)`, { code, cause: err });
    if (CAPACITY.test(message)) return new ProviderError('Capacity', text, { code, cause: err });
    if (QUOTA.test(message)) return new ProviderError('Quota', text, { code, block: 'cloud', cause: err });
    return new ProviderError('InvalidRequest', text, { code, cause: err });
  }
  if (err instanceof ZodError) return new ProviderError('Failed', `massedcompute: unexpected response shape (${err.message.slice(0, 200)})`, { code: 'bad-response', cause: err });
  const code = (err as { code?: unknown } | null)?.code;
  return new ProviderError('Transient', `massedcompute: network error${typeof code === 'string' ? ` ${code}` : ''}`, { ...(typeof code === 'string' ? { code } : {}), cause: err });
}
