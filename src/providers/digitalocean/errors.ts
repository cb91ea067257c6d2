import type { ProviderError } from '../../core/errors';
import { classifyHttp, retryAfterMs, textField, type HttpRules } from '../classify-http';
import type { HttpError } from '../http';

/** Retry-After (seconds or HTTP date), else DO's `ratelimit-reset` (epoch seconds) → milliseconds. */
function waitMs(err: HttpError, now = Date.now()): number | undefined {
  const ms = retryAfterMs(err.retryAfter, now);
  if (ms !== undefined) return ms;
  const reset = Number(err.rateLimitReset);
  return err.rateLimitReset !== undefined && Number.isFinite(reset) ? Math.max(0, reset * 1000 - now) : undefined;
}

/** `{id, message, request_id}`. */
function vendor(body: unknown): { code?: string; text?: string } {
  const id = typeof body === 'object' && body !== null ? (body as { id?: unknown }).id : undefined;
  const text = textField(body, ['message'], Infinity);
  return { ...(typeof id === 'string' ? { code: id } : {}), ...(text ? { text } : {}) };
}

// 422 carries no finer code; the droplet limit is the account quota and only its message tells it apart.
const LIMIT = /droplet limit|exceed your .*limit/i;
const UNAVAILABLE = /not available in this region|size is not available|region is not available/i;

const RULES: HttpRules = { vendor: 'digitalocean', read: (e) => vendor(e.body), credentials: 'DIGITALOCEAN_TOKEN and its scopes', waitMs: (e) => waitMs(e) };

/**
 * Map any error from the DigitalOcean API layer to the one taxonomy. `op` = the primitive:
 * a 422 on create is capacity (dstack's reading), elsewhere a bad request.
 */
export function classify(err: unknown, op?: 'create'): ProviderError {
  return classifyHttp(err, {
    ...RULES,
    rules: (e, { text = '' }) => {
      if (e.status !== 422) return undefined;
      if (LIMIT.test(text)) return { kind: 'Quota', block: 'cloud' };
      if (UNAVAILABLE.test(text)) return { kind: 'Unavailable' };
      return op === 'create' ? { kind: 'Capacity' } : undefined;
    },
  });
}
