/**
 * Nebius credentials: a static IAM token, or a service-account key exchanged for short-lived
 * IAM tokens as the official SDK does (nebius/base/service_account, nebius/aio/token): a JWT
 * signed RS256 with the account's private key (kid header, iss = sub = the account id, aud the
 * token service, one minute to live) is sent to TokenExchangeService.Exchange, which answers a
 * Bearer token and its `expires_in`. Tokens are cached and renewed once 90% of their lifetime
 * has passed (the SDK's `lifetime_safe_fraction`). Neither the key nor a token ever enters an
 * error message.
 */
import { createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';

/** Supplies the bearer token of each call. */
export interface TokenSource {
  token(): Promise<string>;
}

export function staticToken(token: string): TokenSource {
  return { token: async () => token };
}

/** A service account's signing identity (the `subject-credentials` of a credentials file). */
export interface ServiceAccountKey {
  serviceAccountId: string;
  publicKeyId: string;
  privateKey: KeyObject;
}

/** The credentials file `nebius iam auth-public-key generate` writes (the SDK's `credentials_file_name`). */
const CredentialsFile = z.object({
  'subject-credentials': z.object({
    type: z.string().optional(),
    alg: z.literal('RS256'),
    'private-key': z.string(),
    kid: z.string().min(1),
    iss: z.string().min(1),
    sub: z.string().min(1),
  }),
});

/** Read and check a service-account credentials file; errors name the file, never its content. */
export function readServiceAccountFile(path: string): ServiceAccountKey {
  const fail = (why: string): ProviderError => new ProviderError('Credentials', `nebius: service-account file ${path}: ${why} (NEBIUS_SERVICE_ACCOUNT_FILE)`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw fail(e instanceof SyntaxError ? 'not JSON' : 'cannot be read');
  }
  const p = CredentialsFile.safeParse(raw);
  if (!p.success) throw fail(`not a credentials file (${p.error.issues[0]?.path.join('.') ?? ''}: ${p.error.issues[0]?.code ?? ''})`);
  const sc = p.data['subject-credentials'];
  if (sc.type && sc.type !== 'JWT') throw fail('only type JWT is supported');
  if (sc.iss !== sc.sub) throw fail('iss and sub differ');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(sc['private-key']);
  } catch {
    throw fail('private-key is not a PEM private key');
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw fail('private-key is not an RSA key');
  return { serviceAccountId: sc.sub, publicKeyId: sc.kid, privateKey };
}

/** Audience the SDK puts in the JWT. */
export const TOKEN_AUDIENCE = 'token-service.iam.new.nebiuscloud.net';
const b64url = (x: string | Buffer): string => Buffer.from(x).toString('base64url');

/** The signed JWT the SDK sends as `subject_token`. */
export function signJwt(key: ServiceAccountKey, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: key.publicKeyId }));
  const claims = b64url(JSON.stringify({ iss: key.serviceAccountId, sub: key.serviceAccountId, aud: TOKEN_AUDIENCE, iat, exp: iat + 60 }));
  const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(key.privateKey);
  return `${header}.${claims}.${b64url(signature)}`;
}

/** `nebius.iam.v1.ExchangeTokenRequest` as the SDK fills it. */
export interface ExchangeTokenRequest {
  grant_type: string;
  requested_token_type: string;
  subject_token: string;
  subject_token_type: string;
}
export interface ExchangedToken {
  access_token: string;
  token_type: string;
  expires_in: number;
}
export type Exchange = (req: ExchangeTokenRequest) => Promise<ExchangedToken>;

/** Renew once this fraction of a token's lifetime has passed (the SDK's default). */
const SAFE_FRACTION = 0.9;

/** IAM tokens for a service account, cached and renewed before expiry; concurrent callers share one exchange. */
export class ServiceAccountTokens implements TokenSource {
  private current?: { token: string; renewAt: number; expiresAt: number };
  private pending?: Promise<string>;

  constructor(
    private readonly key: ServiceAccountKey,
    private readonly exchange: Exchange,
    private readonly now: () => number = Date.now,
  ) {}

  async token(): Promise<string> {
    const t = this.current;
    const now = this.now();
    if (t && now < t.renewAt) return t.token;
    this.pending ??= this.renew().finally(() => (this.pending = undefined));
    try {
      return await this.pending;
    } catch (e) {
      // A failed renewal while the old token still lives: keep using it; the next call retries.
      if (t && now < t.expiresAt) return t.token;
      throw e;
    }
  }

  private async renew(): Promise<string> {
    const issuedAt = this.now();
    const res = await this.exchange({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      subject_token: signJwt(this.key, issuedAt),
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    });
    if (res.token_type !== 'Bearer')
      throw new ProviderError('Credentials', `nebius: token exchange answered a ${res.token_type || 'typeless'} token, not Bearer`);
    const lifeMs = Math.max(0, res.expires_in * 1000);
    this.current = { token: res.access_token, renewAt: issuedAt + lifeMs * SAFE_FRACTION, expiresAt: issuedAt + lifeMs };
    return res.access_token;
  }
}
