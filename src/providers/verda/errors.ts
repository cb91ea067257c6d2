import type { ProviderError } from '../../core/errors';
import { classifyHttp, type HttpRules, type Verdict } from '../classify-http';

/** `{code, message}`; plain text where a proxy answered. */
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

const CODES: Record<string, Verdict> = {
  server_error: { kind: 'Transient' },
  service_unavailable: { kind: 'Transient' },
};

const RULES: HttpRules = {
  vendor: 'verda',
  read: (e) => {
    const { code, message } = vendorError(e.body);
    return { ...(code ? { code } : {}), ...(message ? { text: message } : {}) };
  },
  codes: CODES,
  credentials: 'VERDA_CLIENT_ID and VERDA_CLIENT_SECRET',
};

/** Map any error from the Verda API layer to the one taxonomy; `op` = the primitive. */
export function classify(err: unknown, op?: 'create'): ProviderError {
  return classifyHttp(err, {
    ...RULES,
    rules: (e, { code, text = '' }) => {
      if (NOT_YET.test(text)) return { kind: 'Transient' };
      if (code === 'insufficient_funds' || e.status === 402) return { kind: 'Quota', block: 'cloud' };
      if (code === 'unauthorized_request') return { kind: 'Credentials' };
      if (e.status === 401 || e.status === 403) return undefined;
      return op === 'create' && CAPACITY.test(text) ? { kind: 'Capacity' } : undefined;
    },
  });
}
