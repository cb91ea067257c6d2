import { ZodError } from 'zod';
import { ProviderError, isProviderError, type ErrorKind } from '../../errors';
import { VastHttpError } from './api';

/** Parse an HTTP Retry-After (delta seconds or HTTP date) into milliseconds. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** `{success:false, error, msg}`; some endpoints send only `msg`/`message`, or plain text. */
export function vendorError(body: unknown): { code?: string; text?: string } {
  if (typeof body === 'string') return { text: body.slice(0, 300) };
  if (typeof body !== 'object' || body === null) return {};
  const b = body as { error?: unknown; msg?: unknown; message?: unknown };
  const text = [b.msg, b.message].find((v): v is string => typeof v === 'string' && v !== '');
  return { ...(typeof b.error === 'string' ? { code: b.error } : {}), ...(text ? { text } : {}) };
}

const CODES: Record<string, ErrorKind> = {
  no_such_ask: 'Capacity',
  invalid_args: 'InvalidRequest',
  invalid_price: 'InvalidRequest',
  no_ssh_key_for_vm: 'InvalidRequest',
  // Not in the public docs (assumed): a balance problem stops every offer of this cloud.
  insufficient_credit: 'Quota',
};

export function classify(err: unknown): ProviderError {
  if (isProviderError(err)) return err;
  if (err instanceof VastHttpError) {
    const { code, text } = vendorError(err.body);
    // The 404 "no_such_ask" on create carries its code inside msg only.
    const effective = code ?? (text && /\bno_such_ask\b/.test(text) ? 'no_such_ask' : undefined);
    const message = `Vast.ai: ${text ?? code ?? `HTTP ${err.status}`}`;
    const opts = { code: effective ?? String(err.status), cause: err };
    const s = err.status;
    if (s === 429) {
      const ms = retryAfterMs(err.retryAfter);
      return new ProviderError('Transient', message, { ...opts, ...(ms === undefined ? {} : { retryAfterMs: ms }) });
    }
    const known = effective === undefined ? undefined : CODES[effective];
    if (known === 'Quota') return new ProviderError('Quota', message, { ...opts, block: 'cloud' });
    if (known) return new ProviderError(known, message, opts);
    if (s >= 500) return new ProviderError('Transient', message, opts);
    if (s === 401 || s === 403) return new ProviderError('Credentials', message, opts);
    if (s === 402) return new ProviderError('Quota', message, { ...opts, block: 'cloud' });
    // The ask went away between search and accept.
    if (s === 410 || (s === 404 && err.op === 'create')) return new ProviderError('Capacity', message, opts);
    return new ProviderError('InvalidRequest', message, opts);
  }
  if (err instanceof ZodError) return new ProviderError('Failed', 'Vast.ai: unexpected response shape', { code: 'bad-response', cause: err });
  const msg = err instanceof Error ? err.message : String(err);
  return new ProviderError('Transient', `Vast.ai: network error: ${msg}`, { code: 'network', cause: err });
}

/** Destroy of something already gone: 404 `not_found`, or dstack's `no_such_instance`. */
export function isGone(err: unknown): boolean {
  if (!(err instanceof VastHttpError)) return false;
  const { code } = vendorError(err.body);
  return err.status === 404 || code === 'not_found' || code === 'no_such_instance';
}
