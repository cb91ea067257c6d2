import { ZodError } from 'zod';
import { ProviderError } from '../../errors';

/** A non-2xx answer from the Hyperstack API; carries the parsed body, never the request headers. */
export class HyperstackHttpError extends Error {
  constructor(
    readonly op: string,
    readonly status: number,
    readonly body: unknown,
    readonly retryAfter?: string,
  ) {
    super(`hyperstack ${op}: HTTP ${status}`);
    this.name = 'HyperstackHttpError';
  }
}

/** Retry-After in seconds or as an HTTP date → milliseconds. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function vendorFields(body: unknown): { reason?: string; message?: string } {
  if (typeof body === 'string') return { message: body };
  if (typeof body !== 'object' || body === null) return {};
  const b = body as Record<string, unknown>;
  const out: { reason?: string; message?: string } = {};
  if (typeof b.error_reason === 'string') out.reason = b.error_reason;
  if (typeof b.message === 'string') out.message = b.message;
  return out;
}

// Hyperstack has no capacity or funds code: these message fragments are all the API gives.
const CREATING = /currently being created/i;
const FUNDS = /insufficient (balance|credit|funds)/i;
const CAPACITY = /(capacity|out of stock|not enough (resources|stock)|no (available )?stock|insufficient resources)/i;

/** Map any error from the Hyperstack API layer to the one taxonomy. */
export function classify(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof HyperstackHttpError) {
    const { status } = err;
    const { message = '', reason = status >= 400 && status < 500 ? 'bad_request' : undefined } = vendorFields(err.body);
    const code = reason ?? String(status);
    const text = `${err.message}${message ? `: ${message}` : ''}`;
    if (status === 429) {
      const ms = retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', text, { code: String(status), ...(ms === undefined ? {} : { retryAfterMs: ms }), cause: err });
    }
    if (status >= 500) return new ProviderError('Transient', text, { code, cause: err });
    if (CREATING.test(message)) return new ProviderError('Transient', text, { code, cause: err });
    if (FUNDS.test(message)) return new ProviderError('Quota', text, { code, block: 'cloud', cause: err });
    if (CAPACITY.test(message)) return new ProviderError('Capacity', text, { code, cause: err });
    if (status === 401 || status === 403 || reason === 'unauthorized' || reason === 'forbidden') {
      return new ProviderError('Credentials', `${text} (check HYPERSTACK_API_KEY and the environment)`, { code, cause: err });
    }
    if (status === 409) return new ProviderError('Transient', text, { code, cause: err });
    return new ProviderError('InvalidRequest', text, { code, cause: err });
  }
  if (err instanceof ZodError) {
    return new ProviderError('Failed', `hyperstack: unexpected response shape (${err.message.slice(0, 200)})`, { code: 'bad-response', cause: err });
  }
  const code = (err as { code?: unknown } | null)?.code;
  return new ProviderError('Transient', `hyperstack: network error${typeof code === 'string' ? ` ${code}` : ''}`, {
    ...(typeof code === 'string' ? { code } : {}),
    cause: err,
  });
}
