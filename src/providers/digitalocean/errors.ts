import { ZodError } from 'zod';
import { ProviderError } from '../../errors';

/** A non-2xx answer from the DigitalOcean API; carries the parsed body and rate-limit headers, never request headers. */
export class DoHttpError extends Error {
  constructor(
    readonly op: string,
    readonly status: number,
    readonly body: unknown,
    readonly headers: { retryAfter?: string; ratelimitReset?: string } = {},
  ) {
    super(`digitalocean ${op}: HTTP ${status}`);
    this.name = 'DoHttpError';
  }
}

/** Retry-After (seconds or HTTP date), else DO's `ratelimit-reset` (epoch seconds) → milliseconds. */
export function retryAfterMs(h: DoHttpError['headers'], now = Date.now()): number | undefined {
  if (h.retryAfter !== undefined && h.retryAfter.trim() !== '') {
    const secs = Number(h.retryAfter);
    if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
    const at = Date.parse(h.retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  const reset = Number(h.ratelimitReset);
  return h.ratelimitReset !== undefined && Number.isFinite(reset) ? Math.max(0, reset * 1000 - now) : undefined;
}

function vendor(body: unknown): { id?: string; message: string } {
  if (typeof body === 'string') return { message: body };
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  return { ...(typeof b.id === 'string' ? { id: b.id } : {}), message: typeof b.message === 'string' ? b.message : '' };
}

// 422 carries no finer code; the droplet limit is the account quota and only its message tells it apart.
const LIMIT = /droplet limit|exceed your .*limit/i;
const UNAVAILABLE = /not available in this region|size is not available|region is not available/i;

/**
 * Map any error from the DigitalOcean API layer to the one taxonomy. `op` = the primitive:
 * a 422 on create is capacity (dstack's reading), elsewhere a bad request.
 */
export function classify(err: unknown, op?: 'create'): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof DoHttpError) {
    const { id, message } = vendor(err.body);
    const code = id ?? String(err.status);
    const text = `${err.message}${message ? `: ${message}` : ''}`;
    if (err.status === 429) {
      const ms = retryAfterMs(err.headers);
      return new ProviderError('Transient', text, { code, ...(ms === undefined ? {} : { retryAfterMs: ms }), cause: err });
    }
    if (err.status >= 500) return new ProviderError('Transient', text, { code, cause: err });
    if (err.status === 401 || err.status === 403) return new ProviderError('Credentials', `${text} (check DIGITALOCEAN_TOKEN and its scopes)`, { code, cause: err });
    if (err.status === 422 && LIMIT.test(message)) return new ProviderError('Quota', text, { code, block: 'cloud', cause: err });
    if (err.status === 422 && UNAVAILABLE.test(message)) return new ProviderError('Unavailable', text, { code, cause: err });
    if (err.status === 422 && op === 'create') return new ProviderError('Capacity', text, { code, cause: err });
    return new ProviderError('InvalidRequest', text, { code, cause: err });
  }
  if (err instanceof ZodError) return new ProviderError('Failed', `digitalocean: unexpected response shape (${err.message.slice(0, 200)})`, { code: 'bad-response', cause: err });
  const code = (err as { code?: unknown } | null)?.code;
  return new ProviderError('Transient', `digitalocean: network error${typeof code === 'string' ? ` ${code}` : ''}`, { ...(typeof code === 'string' ? { code } : {}), cause: err });
}
