/**
 * The one redaction of credentials from vendor answers, applied before an answer or an error
 * leaves an adapter (JsonHttp for the HTTP clouds; the AWS, GCP, Nebius and Docker api.ts): every
 * credential value the adapter holds, and whatever looks like one in any text (bearer/basic tokens,
 * an `Authorization` header, AWS SigV4 credentials, API-key fields, private keys), becomes
 * `[REDACTED]`. A vendor body that echoes the request so reaches neither history, logs nor the CLI.
 */

export const REDACTED = '[REDACTED]';

/** Shorter values are not redacted by value (they would hit ordinary words); patterns still apply. */
const MIN_SECRET_LENGTH = 6;

/** Credential-shaped text, whatever the value: the matched group 1 is kept, the rest replaced. */
const PATTERNS: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{6,}/gi,
  /(\bauthorization["']?\s*[:=]\s*["']?)[^"'\r\n,;}]+/gi,
  /(\b(?:x-goog-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?access[_-]?key|session[_-]?token|password)["']?\s*[:=]\s*["']?)[^"'\s,;&}]+/gi,
  /(\bCredential=)[^,\s]+/g,
  /(\bSignature=)[0-9a-fA-F]+/g,
  /\bya29\.[A-Za-z0-9._-]+/g,
];

/** The values to redact, each also without a `Bearer `/`Basic ` prefix (a header value holds both). */
export function secretValues(values: Iterable<string | undefined>): string[] {
  const out = new Set<string>();
  for (const v of values) {
    if (!v) continue;
    out.add(v);
    const bare = /^(?:bearer|basic)\s+(.+)$/i.exec(v)?.[1];
    if (bare) out.add(bare);
  }
  return [...out].filter((v) => v.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/** `text` with every secret value and every credential-shaped span replaced by `[REDACTED]`. */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secretValues(secrets)) out = out.split(s).join(REDACTED);
  for (const p of PATTERNS) out = out.replace(p, (_m, keep?: unknown) => `${typeof keep === 'string' ? keep : ''}${REDACTED}`);
  return out;
}

/** A parsed answer (JSON or text) with every string in it redacted; keys, and objects other than plain ones (buffers, messages), are kept. */
export function redactValue(value: unknown, secrets: readonly string[] = []): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (isPlain(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, secrets)]));
  return value;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Redacts an error in place, with its cause chain: each link's message, stack and every other
 * own field holding text or plain data (HttpError's `body`, an SDK exception's parsed `Error`),
 * Error or plain failure object (Nebius's), so that a classifier reading the cause still sees its
 * status and code. Returns the same error.
 */
export function redactError<E>(err: E, secrets: readonly string[] = []): E {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (typeof e === 'object' && e !== null && !seen.has(e)) {
    seen.add(e);
    const w = e as Record<string, unknown>;
    for (const k of [...new Set(['message', 'stack', ...Object.keys(w)])]) {
      const v = w[k];
      if (k === 'cause' || (typeof v !== 'string' && !Array.isArray(v) && !isPlain(v))) continue;
      const d = Object.getOwnPropertyDescriptor(w, k);
      if (d && !d.configurable && !d.writable) continue;
      Object.defineProperty(w, k, { value: redactValue(v, secrets), writable: d?.writable ?? true, enumerable: d?.enumerable ?? false, configurable: true });
    }
    e = w.cause;
  }
  return err;
}
