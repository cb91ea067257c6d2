import type { ProviderError } from '../../core/errors';
import { classifyHttp, textField, type HttpRules } from '../classify-http';

/**
 * RunPod → taxonomy by HTTP status (v2 has no machine-readable codes; its RFC 9457 problem JSON
 * carries `{title, status, detail}`, v1 `{message}`). On create, 400 is the capacity answer ("no
 * longer any instances available") and 403 means this account cannot use the pool (skip the
 * offer); elsewhere 403 is a key without scope.
 */
const RULES: HttpRules = {
  vendor: 'RunPod',
  read: (e) => ({ text: textField(e.body, ['detail', 'title', 'message'], 200) }),
  rules: (e) => {
    if (e.status === 403 && e.op === 'create') return { kind: 'Unavailable' };
    // Insufficient balance: no offer of this cloud can start until the account is topped up.
    if (e.status === 402) return { kind: 'Quota', block: 'cloud' };
    if (e.status === 400 && e.op === 'create') return { kind: 'Capacity' };
    return undefined;
  },
  credentials: 'RUNPOD_API_KEY',
};

export function classify(err: unknown): ProviderError {
  return classifyHttp(err, RULES);
}
