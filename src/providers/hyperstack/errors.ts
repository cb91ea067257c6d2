import type { ProviderError } from '../../core/errors';
import { classifyHttp, type HttpRules } from '../classify-http';

/** `{status: false, message, error_reason}`. */
function vendorFields(body: unknown): { code?: string; text?: string } {
  if (typeof body === 'string') return body ? { text: body } : {};
  if (typeof body !== 'object' || body === null) return {};
  const b = body as Record<string, unknown>;
  return {
    ...(typeof b.error_reason === 'string' ? { code: b.error_reason } : {}),
    ...(typeof b.message === 'string' && b.message ? { text: b.message } : {}),
  };
}

// Hyperstack has no capacity or funds code: these message fragments are all the API gives.
const CREATING = /currently being created/i;
const FUNDS = /insufficient (balance|credit|funds)/i;
const CAPACITY = /(capacity|out of stock|not enough (resources|stock)|no (available )?stock|insufficient resources)/i;

const RULES: HttpRules = {
  vendor: 'hyperstack',
  read: (e) => vendorFields(e.body),
  rules: (e, { code, text = '' }) => {
    if (CREATING.test(text)) return { kind: 'Transient' };
    if (FUNDS.test(text)) return { kind: 'Quota', block: 'cloud' };
    if (CAPACITY.test(text)) return { kind: 'Capacity' };
    if (code === 'unauthorized' || code === 'forbidden') return { kind: 'Credentials' };
    if (e.status === 409) return { kind: 'Transient' };
    return undefined;
  },
  credentials: 'HYPERSTACK_API_KEY and the environment',
};

/** Map any error from the Hyperstack API layer to the one taxonomy. */
export function classify(err: unknown): ProviderError {
  return classifyHttp(err, RULES);
}
