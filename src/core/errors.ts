/**
 * The one error taxonomy. Adapters throw {@link ProviderError}; activities turn it into an
 * `ApplicationFailure` whose `type` is the kind; workflows branch on that type, never on text.
 * No Temporal import here: workflows, activities and adapters all share it.
 */

export const ERROR_KINDS = ['Transient', 'Capacity', 'Quota', 'Unavailable', 'Failed', 'InvalidRequest', 'Credentials'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/**
 * What to block in the failover search after an error.
 * - `offer`: this exact offer (cloud/region/zone/type)
 * - `zone`: every type in this zone
 * - `type-in-region`: this instance type in every zone of the region
 * - `region`: every type in the region
 * - `cloud`: the whole cloud
 */
export type BlockScope = 'offer' | 'zone' | 'type-in-region' | 'region' | 'cloud';
export const BLOCK_SCOPES: readonly BlockScope[] = ['offer', 'zone', 'type-in-region', 'region', 'cloud'];

export interface ProviderErrorOptions {
  /** Override of the default scope for this kind. */
  block?: BlockScope;
  /** Vendor error code or HTTP status, for humans and tests. */
  code?: string;
  /** When the vendor says how long to back off (HTTP Retry-After). */
  retryAfterMs?: number;
  cause?: unknown;
}

/** The only error an adapter throws. */
export class ProviderError extends Error {
  readonly kind: ErrorKind;
  readonly block?: BlockScope;
  readonly code?: string;
  readonly retryAfterMs?: number;

  constructor(kind: ErrorKind, message: string, opts: ProviderErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProviderError';
    this.kind = kind;
    if (opts.block !== undefined) this.block = opts.block;
    if (opts.code !== undefined) this.code = opts.code;
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
  }
}

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}

export function isErrorKind(s: unknown): s is ErrorKind {
  return typeof s === 'string' && (ERROR_KINDS as readonly string[]).includes(s);
}

/** The kinds that end a launch at once (after compensation). */
export function isFatal(kind: ErrorKind): boolean {
  return kind === 'InvalidRequest' || kind === 'Credentials';
}

/** User-facing input error: the CLI prints it and exits 2. */
export class InputError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly suggestion?: string,
  ) {
    super(message);
    this.name = 'InputError';
  }
}
