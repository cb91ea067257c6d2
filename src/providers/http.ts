/**
 * The one small JSON-over-HTTP client the HTTP cloud adapters share (undici `request`). Each
 * cloud's `api.ts` stays the only file of that cloud that talks HTTP: it owns a `JsonHttp`,
 * names every call (`op`) and zod-parses every answer.
 */
import { request } from 'undici';
import { redactError, redactValue } from './redact';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * A non-2xx answer (or one the adapter reads as a failure). Carries the parsed body, redacted
 * (`redact.ts`: a body that echoes the request's credentials), and the throttling headers only.
 */
export class HttpError extends Error {
  constructor(
    /** The adapter's name for the call (`create`, `list flavors`); classifiers may branch on it. */
    readonly op: string,
    readonly status: number,
    /** Parsed JSON, else the text, else undefined. */
    readonly body: unknown,
    /** The raw `Retry-After` header. */
    readonly retryAfter?: string,
    /** The raw `ratelimit-reset` header (DigitalOcean: epoch seconds). */
    readonly rateLimitReset?: string,
  ) {
    super(`HTTP ${status} to ${op}`);
    this.name = 'HttpError';
  }
}

/**
 * The HTTP answer behind an error: the {@link HttpError} itself, or the one a cloud's `classify`
 * wrapped (`ProviderError.cause`). Lets an adapter read a status its api.ts already classified.
 */
export function httpErrorOf(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  const cause = err instanceof Error ? err.cause : undefined;
  return cause instanceof HttpError ? cause : undefined;
}

/** One answer, whatever its status. */
export interface HttpAnswer {
  op: string;
  status: number;
  body: unknown;
  retryAfter?: string;
  rateLimitReset?: string;
}

export interface JsonHttpOptions {
  /** Base URL; trailing slashes are dropped, paths start with `/`. */
  baseUrl: string;
  /**
   * Headers that authenticate one request (`authorization`, `api_key`...). Called per request,
   * so a token that expires can be refreshed. Never logged, never put into an error.
   */
  auth?: () => Record<string, string> | Promise<Record<string, string>>;
  /** Header and body timeouts, ms (default 30 s each). */
  timeoutMs?: number;
  /** A 2xx body that still means failure (Vast.ai's `{success: false}`). */
  failed?: (body: unknown) => boolean;
  /** Credentials sent other than in `auth`'s headers (an OAuth client secret in a body): redacted from failures too. */
  secrets?: () => readonly (string | undefined)[];
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** JSON requests against one base URL; bodies parse as JSON, else as (trimmed) text. */
export class JsonHttp {
  readonly #base: string;
  readonly #auth: JsonHttpOptions['auth'];
  readonly #timeout: number;
  readonly #failed: JsonHttpOptions['failed'];
  readonly #secrets: JsonHttpOptions['secrets'];

  constructor(opts: JsonHttpOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, '');
    this.#auth = opts.auth;
    this.#timeout = opts.timeoutMs ?? 30_000;
    this.#failed = opts.failed;
    this.#secrets = opts.secrets;
  }

  /**
   * One request; answers every status (the caller decides). `anonymous` skips `auth` (token
   * endpoints). A failure's body and a network error come back redacted of every credential.
   */
  async send(op: string, method: HttpMethod, path: string, body?: unknown, anonymous = false): Promise<HttpAnswer> {
    const auth = anonymous || !this.#auth ? {} : await this.#auth();
    const secrets = [...Object.values(auth), ...(this.#secrets?.() ?? [])].filter((v): v is string => typeof v === 'string');
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(this.#base + path, {
        method,
        headers: { accept: 'application/json', ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headersTimeout: this.#timeout,
        bodyTimeout: this.#timeout,
      });
    } catch (err) {
      throw redactError(err, secrets);
    }
    const text = await res.body.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // Plain-text answers (Verda's ids, proxies' HTML error pages).
        parsed = text.trim();
      }
    }
    if (res.statusCode < 200 || res.statusCode >= 300 || this.#failed?.(parsed)) parsed = redactValue(parsed, secrets);
    const retryAfter = header(res.headers['retry-after']);
    const rateLimitReset = header(res.headers['ratelimit-reset']);
    return {
      op,
      status: res.statusCode,
      body: parsed,
      ...(retryAfter === undefined ? {} : { retryAfter }),
      ...(rateLimitReset === undefined ? {} : { rateLimitReset }),
    };
  }

  /** One request; the parsed body of a 2xx, else throws {@link HttpError}. */
  async call(op: string, method: HttpMethod, path: string, body?: unknown): Promise<unknown> {
    return this.check(await this.send(op, method, path, body));
  }

  /** The body of a successful answer, else the {@link HttpError} it stands for. */
  check(a: HttpAnswer): unknown {
    if (a.status < 200 || a.status >= 300 || this.#failed?.(a.body)) throw new HttpError(a.op, a.status, a.body, a.retryAfter, a.rateLimitReset);
    return a.body;
  }
}

/** An `auth` provider for a fixed bearer token. */
export function bearer(token: string): () => Record<string, string> {
  const headers = { authorization: `Bearer ${token}` };
  return () => headers;
}
