import { ProviderError, type ErrorKind } from '../../core/errors';

/** Node system-error codes that go away on their own (resource exhaustion, races). */
const TRANSIENT_CODES = new Set(['EAGAIN', 'EMFILE', 'ENFILE', 'EBUSY', 'EINTR', 'ETIMEDOUT', 'EADDRINUSE']);
/** Codes that mean the local cloud cannot work on this machine as configured. */
const SETUP_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR']);

/** The hint every "binary missing" error carries. */
export const INSTALL_HINT =
  'install OpenSSH: `apt-get install -y openssh-server` (Debian/Ubuntu), `dnf install -y openssh-server` (Fedora/RHEL) or `apk add openssh-server` (Alpine)';

/** sshd or ssh-keygen is not where we expect it. */
export function missingBinary(path: string): ProviderError {
  return new ProviderError('InvalidRequest', `local: ${path} not found or not executable; ${INSTALL_HINT}`, { code: 'ENOENT' });
}

/** An error armed in the fault file. Quota blocks the region, as real clouds' quotas do. */
export function injected(kind: ErrorKind, where: string): ProviderError {
  const message = `local: injected ${kind} fault at ${where}`;
  return new ProviderError(kind, message, kind === 'Quota' ? { block: 'region', code: 'FAULT' } : { code: 'FAULT' });
}

function codeOf(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const c = err.code;
    return typeof c === 'string' ? c : undefined;
  }
  return undefined;
}

/**
 * Any error from the filesystem or a child process → ProviderError.
 * Resource exhaustion is Transient; a root that cannot be written is InvalidRequest
 * (retrying or another offer cannot fix it); anything else Failed (that attempt is lost).
 */
export function classify(err: unknown, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const code = codeOf(err);
  const detail = err instanceof Error ? err.message : String(err);
  const message = `local: ${what}: ${detail}`;
  if (code !== undefined && TRANSIENT_CODES.has(code)) return new ProviderError('Transient', message, { code, cause: err });
  if (code !== undefined && SETUP_CODES.has(code)) return new ProviderError('InvalidRequest', message, { code, cause: err });
  return new ProviderError('Failed', message, code === undefined ? { cause: err } : { code, cause: err });
}
