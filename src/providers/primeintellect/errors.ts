import type { ProviderError } from '../../core/errors';
import { classifyHttp, type HttpRules } from '../classify-http';
import { httpErrorOf } from '../http';

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

const RULES: HttpRules = {
  vendor: 'Prime Intellect',
  read: (e) => ({ text: errorText(e.body) }),
  rules: (e, { text = '' }) => {
    const s = e.status;
    // A refused key stays Credentials whatever its text says.
    if (s === 401 || s === 403) return undefined;
    // Pod limits and balance are account-wide: block the whole cloud.
    if (s === 402) return { kind: 'Quota', block: 'cloud' };
    if (s === 422) return { kind: 'InvalidRequest' };
    if (QUOTA.test(text)) return { kind: 'Quota', block: 'cloud' };
    if (CAPACITY.test(text)) return { kind: 'Capacity' };
    return undefined;
  },
  credentials: 'PRIME_API_KEY',
};

export function classify(err: unknown): ProviderError {
  return classifyHttp(err, RULES);
}

/** A POST /ssh_keys refused because the name or key already exists. */
export function isConflict(err: unknown): boolean {
  const http = httpErrorOf(err);
  return http !== undefined && (http.status === 409 || (http.status === 400 && /already exists|duplicate/i.test(errorText(http.body) ?? '')));
}
