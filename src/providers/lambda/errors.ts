import type { ProviderError } from '../../core/errors';
import { classifyHttp, type HttpRules, type Verdict } from '../classify-http';
import { httpErrorOf } from '../http';

/** Lambda's error envelope: `{"error": {"code", "message", "suggestion"?}}`. */
function vendorError(body: unknown): { code?: string; text?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const e = (body as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return {};
  const { code, message } = e as { code?: unknown; message?: unknown };
  return { ...(typeof code === 'string' ? { code } : {}), ...(typeof message === 'string' ? { text: message } : {}) };
}

/** Vendor codes from the v1 spec's ApiError schemas → kind (and block scope where it differs). */
const CODES: Record<string, Verdict> = {
  'instance-operations/launch/insufficient-capacity': { kind: 'Capacity' },
  'global/quota-exceeded': { kind: 'Quota', block: 'region' },
  'provider/quota-exceeded': { kind: 'Quota', block: 'region' },
  'global/invalid-parameters': { kind: 'InvalidRequest' },
  'global/object-does-not-exist': { kind: 'InvalidRequest' },
  'instance-operations/launch/file-system-in-wrong-region': { kind: 'InvalidRequest' },
  'global/invalid-api-key': { kind: 'Credentials' },
  'global/account-inactive': { kind: 'Credentials' },
  'global/invalid-billing-address': { kind: 'Credentials' },
  'provider/internal-unavailable': { kind: 'Transient' },
};

const RULES: HttpRules = { vendor: 'Lambda', read: (e) => vendorError(e.body), codes: CODES, credentials: 'LAMBDA_API_KEY' };

/** Any error from the Lambda adapter → the one taxonomy. Messages never carry the API key. */
export function classify(err: unknown): ProviderError {
  return classifyHttp(err, RULES);
}

/** True when the error is Lambda's "no such object" (gone = success for delete). */
export function isNotFound(err: unknown): boolean {
  const http = httpErrorOf(err);
  return http !== undefined && (http.status === 404 || vendorError(http.body).code === 'global/object-does-not-exist');
}

/** True when a POST /ssh-keys clashed with an existing name. */
export function isDuplicate(err: unknown): boolean {
  const http = httpErrorOf(err);
  return http !== undefined && vendorError(http.body).code === 'global/duplicate';
}
