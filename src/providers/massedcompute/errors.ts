import type { ProviderError } from '../../core/errors';
import { classifyHttp, type HttpRules } from '../classify-http';

/** The first string among `message`, `error`, `detail`, `response` (even an empty one). */
function messageOf(body: unknown): string {
  if (typeof body === 'string') return body;
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  for (const k of ['message', 'error', 'detail', 'response']) if (typeof b[k] === 'string') return b[k];
  return '';
}

// The API documents no error schema or codes: the message text is all there is.
const CAPACITY = /capacity|out of stock|sold out|no (gpus?|instances?) available/i;
const QUOTA = /quota|limit exceeded|insufficient (balance|funds|credit)/i;

const RULES: HttpRules = {
  vendor: 'massedcompute',
  read: (e) => ({ text: messageOf(e.body) }),
  rules: (e, { text = '' }) => {
    // A refused key stays Credentials whatever its text says.
    if (e.status === 401 || e.status === 403) return undefined;
    if (CAPACITY.test(text)) return { kind: 'Capacity' };
    if (QUOTA.test(text)) return { kind: 'Quota', block: 'cloud' };
    return undefined;
  },
  credentials: 'MASSED_COMPUTE_API_KEY',
};

/** Map any error from the Massed Compute API layer to the one taxonomy. */
export function classify(err: unknown): ProviderError {
  return classifyHttp(err, RULES);
}
