import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmCodec, parseKeys } from '../../../src/codec';
import { createCodecServer } from '../../../src/codec/server';

const TOKEN = randomBytes(18).toString('hex');
const UI = 'http://localhost:8233';
const codec = new AesGcmCodec(parseKeys([`k1=${randomBytes(32).toString('base64')}`], 'test'));
const SECRET = { name: 'vm-codec-secret' };

/** A payload in the protocol's JSON shape. */
function toJson(p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

describe('codec server', () => {
  let server: Server;
  let base: string;
  const lines: string[] = [];
  let encrypted: { metadata: Record<string, string>; data: string };

  beforeAll(async () => {
    server = createCodecServer({ codec, token: TOKEN, corsOrigins: [UI], namespaces: ['default'], log: (l) => lines.push(l) });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const [enc] = await codec.encode([defaultPayloadConverter.toPayload(SECRET)]);
    encrypted = toJson(enc!);
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
      body: JSON.stringify(body),
    });

  it('CORS preflight from the UI origin allows POST with Authorization and X-Namespace; another origin gets no CORS', async () => {
    const res = await fetch(`${base}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: UI, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,authorization,x-namespace' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase().split(/, */)).toEqual(
      expect.arrayContaining(['content-type', 'authorization', 'x-namespace']),
    );
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    const other = await fetch(`${base}/decode`, { method: 'OPTIONS', headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('no token or a wrong one: 401 and nothing decoded', async () => {
    for (const headers of [{}, { Authorization: `Bearer ${TOKEN}x` }, { Authorization: TOKEN }] as Record<string, string>[]) {
      const res = await post('/decode', { payloads: [encrypted] }, { ...headers, Origin: UI });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.headers.get('access-control-allow-origin')).toBe(UI);
      expect(await res.text()).not.toContain('vm-codec-secret');
    }
    expect((await post('/nottoken/decode', { payloads: [encrypted] })).status).toBe(401);
  });

  it('decode with the bearer token, or with the token as the path segment before the operation', async () => {
    for (const [path, headers] of [
      ['/decode', { Authorization: `Bearer ${TOKEN}` }],
      [`/${TOKEN}/decode`, {}],
      [`/codec/${TOKEN}/decode`, {}],
    ] as const) {
      const res = await post(path, { payloads: [encrypted] }, headers);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
      expect(Buffer.from(body.payloads[0]!.metadata['encoding']!, 'base64').toString()).toBe('json/plain');
      expect(JSON.parse(Buffer.from(body.payloads[0]!.data, 'base64').toString())).toEqual(SECRET);
    }
  });

  it('encode then decode round trip through HTTP', async () => {
    const plain = toJson(defaultPayloadConverter.toPayload('hello'));
    const enc = (await (await post('/encode', { payloads: [plain] }, { Authorization: `Bearer ${TOKEN}` })).json()) as { payloads: unknown[] };
    const dec = (await (await post('/decode', enc, { Authorization: `Bearer ${TOKEN}` })).json()) as { payloads: unknown[] };
    expect(dec.payloads).toEqual([plain]);
  });

  it('bad body 400, other namespace 403, undecodable 422 naming the key id, unknown path 404', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    expect((await post('/decode', { nope: 1 }, auth)).status).toBe(400);
    expect((await post('/decode', { payloads: [encrypted] }, { ...auth, 'X-Namespace': 'other' })).status).toBe(403);
    const foreign = { ...encrypted, metadata: { ...encrypted.metadata, 'encryption-key-id': Buffer.from('k9').toString('base64') } };
    const res = await post('/decode', { payloads: [foreign] }, auth);
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('k9');
    expect((await post('/other', {}, auth)).status).toBe(404);
  });

  it('logs name the operation and status, never the token or a payload', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(TOKEN);
    expect(lines.join('\n')).not.toContain('vm-codec-secret');
    expect(lines).toContain('POST decode 401');
  });
});
