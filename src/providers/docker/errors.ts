import { ProviderError } from '../../core/errors';
import { OLDEST_API } from './api-version';

/** A non-2xx answer of the Engine API: `{ "message": "..." }` is all the daemon gives. */
export class DockerApiError extends Error {
  constructor(
    readonly op: string,
    readonly status: number,
    message: string,
    readonly retryAfter?: string,
  ) {
    super(message);
    this.name = 'DockerApiError';
  }
}

/** `Retry-After` as delta-seconds or an HTTP date, in ms. */
export function retryAfterMs(v: string | undefined, now = Date.now()): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** The daemon's text for a host port another process took between create and start (it has no error codes). */
const PORT_TAKEN = /port is already allocated|address already in use/;

/** Socket-level failures (undici/Node error codes) before any HTTP answer. */
const SOCKET_UNAVAILABLE = new Set(['ENOENT', 'ECONNREFUSED', 'EPIPE']);

/**
 * Map an Engine API failure to a {@link ProviderError}, by HTTP status (the daemon has no error codes)
 * and the operation: a 404 on create means the image is missing on this host (nothing was created).
 * Socket-level refusals name the engine (`engine`, a DOCKER_HOST-style address) and the fix.
 */
export function classify(err: unknown, op = 'docker', engine = 'unix:///var/run/docker.sock'): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof DockerApiError) return classifyStatus(err);
  const code = socketCode(err);
  if (code === 'EACCES')
    return new ProviderError(
      'Credentials',
      `docker ${op}: permission denied on the engine socket ${engine}: run the worker as a member of the docker group, or point DOCKER_HOST at an engine it may use`,
      { code, cause: err },
    );
  if (code && SOCKET_UNAVAILABLE.has(code))
    return new ProviderError(
      'Unavailable',
      `docker ${op}: no Docker engine answers at ${engine} (${code}): start dockerd, or point DOCKER_HOST at a running engine`,
      { code, block: 'cloud', cause: err },
    );
  return new ProviderError('Transient', `docker ${op}: ${err instanceof Error ? err.message : String(err)}`, { ...(code ? { code } : {}), cause: err });
}

function classifyStatus(err: DockerApiError): ProviderError {
  const code = String(err.status);
  const msg = `docker ${err.op}: ${err.status}: ${err.message}`;
  const s = err.status;
  // A start the runtime refuses (20.10 answers 400 "OCI runtime create failed", older engines 500) fails
  // again if retried: the attempt failed. A published port taken meanwhile is worth another try.
  if (err.op === 'start' && (s === 400 || s >= 500) && !PORT_TAKEN.test(err.message)) return new ProviderError('Failed', msg, { code, cause: err });
  if (s === 429) {
    const ms = retryAfterMs(err.retryAfter);
    return new ProviderError('Transient', msg, { code, cause: err, ...(ms !== undefined ? { retryAfterMs: ms } : {}) });
  }
  if (s >= 500) return new ProviderError('Transient', msg, { code, cause: err });
  // Authorization plugins answer 401/403 ("authorization denied by plugin …").
  if (s === 401 || s === 403) return new ProviderError('Credentials', msg, { code, cause: err });
  if (s === 404 && err.op === 'create')
    return new ProviderError('Unavailable', `${msg} (build it: docker build -t gpuprov/sshd:1 docker/sshd)`, { code, cause: err });
  if (s === 409) return new ProviderError('Transient', msg, { code, cause: err });
  return new ProviderError('InvalidRequest', msg, { code, cause: err });
}

/** An engine older than the oldest API we speak: nothing on it can work, so the whole cloud is out. */
export function engineTooOld(engine: string, apiVersion: string, dockerVersion: string | undefined): ProviderError {
  return new ProviderError(
    'Unavailable',
    `docker: the engine at ${engine} speaks API ${apiVersion}${dockerVersion ? ` (Docker ${dockerVersion})` : ''}; gpuprov needs API ${OLDEST_API} or newer (Docker 20.10+): upgrade the engine, or point DOCKER_HOST at a newer one`,
    { code: 'EngineTooOld', block: 'cloud' },
  );
}

function socketCode(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string' && /^E[A-Z]+$/.test(c)) return c;
  }
  return undefined;
}
