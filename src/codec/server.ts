/**
 * The codec server (`provision codec-server`): Temporal's remote codec protocol over HTTP, so the
 * Web UI and `temporal workflow show --codec-endpoint` can show encrypted payloads.
 *
 * | request                                  | answer                                                   |
 * |------------------------------------------|----------------------------------------------------------|
 * | OPTIONS (preflight) from an allowed origin| 204 with CORS headers (POST; Content-Type, Authorization, X-Namespace; credentials) |
 * | OPTIONS from another origin              | 204 without CORS headers (the browser refuses)           |
 * | POST …/encode, …/decode without the token| 401, nothing decoded                                     |
 * | POST with X-Namespace outside `namespaces`| 403                                                     |
 * | POST with a body not `{payloads:[…]}`    | 400                                                      |
 * | POST …/decode of a payload it cannot open| 422 naming the key id                                    |
 * | POST …/encode, …/decode, authorised      | 200 `{payloads:[…]}` (protobuf JSON: base64 metadata and data) |
 * | anything else                            | 404                                                      |
 *
 * The token is accepted as `Authorization: Bearer TOKEN` (the temporal CLI's
 * `--codec-auth "Bearer TOKEN"`) or as the path segment before the operation (`/TOKEN/decode`):
 * the Web UI sends an Authorization header only with "pass access token", over https and with
 * its own OIDC login's token, so a UI without login is given the endpoint `http://HOST:PORT/TOKEN`.
 * Only the last path segment picks the operation, as the protocol asks. Logged lines never hold
 * the token, a key or a payload.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { CodecError } from './codec';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The bearer token every POST must carry. */
  token: string;
  /** Origins the browser may call from (`http://localhost:8233`); `*` allows any. */
  corsOrigins: readonly string[];
  /** Namespaces served (X-Namespace); empty: any. */
  namespaces?: readonly string[];
  /** One line per request (method, operation, status, payload count). */
  log?: (line: string) => void;
}

/** The largest body read (bytes): a few histories' payloads, far above one 2 MB payload. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

const PAYLOADS = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string(), z.string()).nullish(), data: z.string().nullish() })),
});
type JsonPayload = z.infer<typeof PAYLOADS>['payloads'][number];

function fromJson(p: JsonPayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = new Uint8Array(Buffer.from(v, 'base64'));
  return { metadata, data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')) };
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) if (v) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** True when `given` is the token (constant time over hashes: no length or prefix leaks). */
function tokenMatches(given: string | undefined, token: string): boolean {
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

function corsHeaders(req: http.IncomingMessage, o: CodecServerOptions): Record<string, string> {
  const origin = req.headers.origin;
  if (!origin || !(o.corsOrigins.includes('*') || o.corsOrigins.includes(origin))) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Allow-Methods': 'POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, X-Namespace',
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  };
}

function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** What one POST asks: the operation (last path segment) and whether it carries the token. */
function route(req: http.IncomingMessage, token: string): { op: string | undefined; authorised: boolean } {
  const segments = new URL(req.url ?? '/', 'http://codec').pathname.split('/').filter((s) => s !== '');
  const last = segments.at(-1);
  const op = last === 'encode' || last === 'decode' ? last : undefined;
  const auth = req.headers.authorization;
  const bearer = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length).trim() : undefined;
  return { op, authorised: tokenMatches(bearer, token) || tokenMatches(segments.at(-2), token) };
}

/** One answer: status, JSON body (none for a preflight), and for the log its operation and payload count. */
interface Answer {
  status: number;
  body: unknown;
  op?: string;
  count?: number;
}

async function answer(req: http.IncomingMessage, o: CodecServerOptions): Promise<Answer> {
  if (req.method === 'OPTIONS') return { status: 204, body: undefined };
  const { op, authorised } = route(req, o.token);
  if (req.method !== 'POST' || !op) return { status: 404, body: { error: 'POST …/encode or …/decode' } };
  if (!authorised) return { status: 401, body: { error: 'missing or wrong codec token' }, op };
  const ns = req.headers['x-namespace'];
  const namespace = Array.isArray(ns) ? ns[0] : ns;
  if (o.namespaces?.length && !(namespace && o.namespaces.includes(namespace))) return { status: 403, body: { error: 'namespace not served here' }, op };
  const text = await readBody(req);
  if (text === undefined) return { status: 413, body: { error: `body over ${MAX_BODY_BYTES} bytes` }, op };
  let parsed: z.infer<typeof PAYLOADS>;
  try {
    parsed = PAYLOADS.parse(JSON.parse(text));
  } catch {
    return { status: 400, body: { error: 'body is not {"payloads": [{"metadata": {…}, "data": "…"}]}' }, op };
  }
  const payloads = parsed.payloads.map(fromJson);
  try {
    const out = op === 'encode' ? await o.codec.encode(payloads) : await o.codec.decode(payloads);
    return { status: 200, body: { payloads: out.map(toJson) }, count: out.length, op };
  } catch (err) {
    if (err instanceof CodecError) return { status: 422, body: { error: err.message }, op };
    throw err;
  }
}

/** The HTTP server (not yet listening); see the module comment. */
export function createCodecServer(o: CodecServerOptions): http.Server {
  return http.createServer((req, res) => {
    const cors = corsHeaders(req, o);
    answer(req, o)
      .catch((): Answer => ({ status: 500, body: { error: 'codec failed' } }))
      .then((a) => {
        if (req.method !== 'OPTIONS') o.log?.(`${req.method} ${a.op ?? '-'} ${a.status}${a.count !== undefined ? ` ${a.count} payload(s)` : ''}`);
        if (a.status === 401) cors['WWW-Authenticate'] = 'Bearer';
        if (a.body === undefined) res.writeHead(a.status, cors).end();
        else res.writeHead(a.status, { ...cors, 'Content-Type': 'application/json' }).end(JSON.stringify(a.body));
      })
      .catch(() => res.destroy());
  });
}
