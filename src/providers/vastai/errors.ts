import type { ProviderError } from '../../core/errors';
import { classifyHttp, type HttpRules, type Verdict } from '../classify-http';
import { httpErrorOf } from '../http';

/** `{success:false, error, msg}`; some endpoints send only `msg`/`message`, or plain text. */
export function vendorError(body: unknown): { code?: string; text?: string } {
  if (typeof body === 'string') return { text: body.slice(0, 300) };
  if (typeof body !== 'object' || body === null) return {};
  const b = body as { error?: unknown; msg?: unknown; message?: unknown };
  const text = [b.msg, b.message].find((v): v is string => typeof v === 'string' && v !== '');
  return { ...(typeof b.error === 'string' ? { code: b.error } : {}), ...(text ? { text } : {}) };
}

const CODES: Record<string, Verdict> = {
  no_such_ask: { kind: 'Capacity', block: 'offer' },
  invalid_args: { kind: 'InvalidRequest' },
  // Only a spot create sends a price (the ask's `min_bid`): refused, the bid is below the machine's
  // minimum now, so this spot offer has no capacity at it (the offer key's /spot spares on-demand).
  invalid_price: { kind: 'Capacity', block: 'offer' },
  no_ssh_key_for_vm: { kind: 'InvalidRequest' },
  // Not in the public docs (assumed): a balance problem stops every offer of this cloud.
  insufficient_credit: { kind: 'Quota', block: 'cloud' },
};

const RULES: HttpRules = {
  vendor: 'Vast.ai',
  read: (e) => {
    const { code, text } = vendorError(e.body);
    // The 404 "no_such_ask" on create carries its code inside msg only.
    const effective = code ?? (text && /\bno_such_ask\b/.test(text) ? 'no_such_ask' : undefined);
    return { ...(effective ? { code: effective } : {}), ...(text ? { text } : {}) };
  },
  codes: CODES,
  rules: (e) => {
    if (e.status === 402) return { kind: 'Quota', block: 'cloud' };
    // The ask went away between search and accept; 410 also when `cancel_unavail` finds that it
    // cannot start now (a spot bid below the winning one): this offer only.
    if (e.status === 410 || (e.status === 404 && e.op === 'create')) return { kind: 'Capacity', block: 'offer' };
    return undefined;
  },
  credentials: 'VAST_API_KEY',
};

export function classify(err: unknown): ProviderError {
  return classifyHttp(err, RULES);
}

/** Destroy of something already gone: 404 `not_found`, or dstack's `no_such_instance`. */
export function isGone(err: unknown): boolean {
  const http = httpErrorOf(err);
  if (!http) return false;
  const { code } = vendorError(http.body);
  return http.status === 404 || code === 'not_found' || code === 'no_such_instance';
}
