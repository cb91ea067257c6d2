/**
 * Credentials never leave an adapter inside a vendor's message: for every cloud, an error answer
 * that echoes the request's Authorization header (or the key itself) becomes a ProviderError whose
 * message, stack and cause chain hold no trace of the key, yet keep the vendor's words. The local
 * cloud has no vendor and no credentials, so it is not in the table.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors';
import type { CloudProvider } from '../../src/core/provider';
import * as aws from '../../src/providers/aws';
import * as digitalocean from '../../src/providers/digitalocean';
import { DockerProvider } from '../../src/providers/docker';
import * as gcp from '../../src/providers/gcp';
import * as hyperstack from '../../src/providers/hyperstack';
import * as lambda from '../../src/providers/lambda';
import * as massedcompute from '../../src/providers/massedcompute';
import { NebiusProvider } from '../../src/providers/nebius';
import * as primeintellect from '../../src/providers/primeintellect';
import { redactText, REDACTED } from '../../src/providers/redact';
import * as runpod from '../../src/providers/runpod';
import * as vastai from '../../src/providers/vastai';
import * as verda from '../../src/providers/verda';
import { startDockerServer, type DockerServer } from '../fixtures/docker/server';
import { PROJECTS, TOKEN, startNebiusServer, type NebiusServer } from '../fixtures/nebius/server';

const key = (): string => `k${randomBytes(20).toString('hex')}`;
const WORDS = 'Invalid API key supplied';
/** An OAuth access token as Google issues them, planted in the GCP answer. */
const YA29 = `ya29.${key()}`;

/** What a careless vendor (or a proxy in front of it) answers: the request's headers and body, echoed. */
function echo(req: IncomingMessage, body: string): string {
  return `${WORDS}. Request headers: ${JSON.stringify(req.headers)}; authorization=${req.headers.authorization ?? ''}; body: ${body}`;
}

/** One 127.0.0.1 server answering every request with `answer`'s status and body. */
async function stub(answer: (req: IncomingMessage, body: string) => { status: number; type: string; body: string }): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const a = answer(req, body);
      res.writeHead(a.status, { 'content-type': a.type });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** An envelope every HTTP cloud's classifier reads its text from (message, msg, detail or error.message). */
const envelope = (text: string): string => JSON.stringify({ message: text, msg: text, detail: text, error: { code: 'global/invalid-api-key', message: text } });

let http: { url: string; server: Server };
let ec2: { url: string; server: Server };
let compute: { url: string; server: Server };
let nebius: NebiusServer;
let docker: DockerServer;
beforeAll(async () => {
  http = await stub((req, body) => ({ status: 401, type: 'application/json', body: envelope(echo(req, body)) }));
  ec2 = await stub((req, body) => ({
    status: 400,
    type: 'text/xml',
    body: `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>InvalidParameterValue</Code><Message>${echo(req, body).replace(/[<>&"]/g, ' ')}</Message></Error></Errors><RequestID>r-1</RequestID></Response>`,
  }));
  compute = await stub((req, body) => ({
    status: 400,
    type: 'application/json',
    body: JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT', message: `${echo(req, body)} Authorization: Bearer ${YA29}`, errors: [] } }),
  }));
  nebius = await startNebiusServer();
  docker = await startDockerServer();
});
afterAll(async () => {
  for (const s of [http, ec2, compute]) await new Promise((r) => s.server.close(r));
  await nebius.close();
  await docker.close();
});

interface Case {
  cloud: string;
  /** The adapter and every credential value it holds. */
  make(): { provider: CloudProvider; secrets: string[] };
  region: string;
  zone?: string;
  /** Arms the fault before the call, where the fixture needs it. */
  arm?(): void;
}

function httpCloud(
  cloud: string,
  fromEnv: (env: NodeJS.ProcessEnv) => CloudProvider | undefined,
  keyVar: string,
  urlVar: string,
  extra: NodeJS.ProcessEnv = {},
): Case {
  return {
    cloud,
    region: 'us-east-1',
    make: () => {
      const secret = key();
      const provider = fromEnv({ [keyVar]: secret, [urlVar]: http.url, ...extra });
      if (!provider) throw new Error(`${cloud}: fromEnv gave no adapter`);
      return { provider, secrets: [secret] };
    },
  };
}

const CASES: Case[] = [
  httpCloud('lambda', lambda.fromEnv, 'LAMBDA_API_KEY', 'LAMBDA_API_URL'),
  httpCloud('runpod', runpod.fromEnv, 'RUNPOD_API_KEY', 'RUNPOD_API_URL'),
  httpCloud('primeintellect', primeintellect.fromEnv, 'PRIME_API_KEY', 'PRIME_API_URL'),
  httpCloud('vastai', vastai.fromEnv, 'VAST_API_KEY', 'VAST_API_URL'),
  httpCloud('hyperstack', hyperstack.fromEnv, 'HYPERSTACK_API_KEY', 'HYPERSTACK_API_URL'),
  httpCloud('digitalocean', digitalocean.fromEnv, 'DIGITALOCEAN_TOKEN', 'DIGITALOCEAN_API_URL'),
  httpCloud('massedcompute', massedcompute.fromEnv, 'MASSED_COMPUTE_API_KEY', 'MASSED_COMPUTE_API_URL'),
  httpCloud('verda', verda.fromEnv, 'VERDA_CLIENT_SECRET', 'VERDA_API_URL', { VERDA_CLIENT_ID: 'gpuprov-client' }),
  {
    cloud: 'aws',
    region: 'us-east-1',
    make: () => {
      const id = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
      const secret = key();
      const provider = aws.fromEnv({ AWS_ACCESS_KEY_ID: id, AWS_SECRET_ACCESS_KEY: secret, AWS_ENDPOINT_URL: ec2.url, AWS_REGION: 'us-east-1' });
      if (!provider) throw new Error('aws: fromEnv gave no adapter');
      return { provider, secrets: [id] };
    },
  },
  {
    cloud: 'gcp',
    region: 'us-central1',
    zone: 'us-central1-a',
    make: () => {
      const provider = gcp.fromEnv({ GOOGLE_CLOUD_PROJECT: 'gpuprov-test', GCP_COMPUTE_ENDPOINT: compute.url });
      if (!provider) throw new Error('gcp: fromEnv gave no adapter');
      // The fixture endpoint's placeholder key (sent as x-goog-api-key) is the credential this adapter holds.
      return { provider, secrets: ['fixture-no-auth', YA29] };
    },
  },
  {
    cloud: 'nebius',
    region: 'eu-north1',
    make: () => ({ provider: new NebiusProvider({ token: TOKEN, projects: { ...PROJECTS }, endpoint: nebius.endpoint, insecure: true }), secrets: [TOKEN] }),
    arm: () => nebius.arm('*', 'echoesToken'),
  },
  {
    cloud: 'docker',
    region: 'local',
    make: () => ({ provider: new DockerProvider({ socketPath: docker.socketPath }), secrets: [] }),
    arm: () =>
      docker.http.arm({
        method: '*',
        pattern: '*',
        status: 403,
        body: { message: `${WORDS}: authorization denied by plugin for Authorization: Bearer ${PLANTED}` },
      }),
  },
];
const PLANTED = key();

/** Every text an error carries on its way out: message, stack, and each cause's (util.inspect shows their fields too). */
function everything(err: unknown): string {
  const parts: string[] = [inspect(err, { depth: 8 })];
  for (let e: unknown = err, i = 0; typeof e === 'object' && e !== null && i < 10; e = (e as { cause?: unknown }).cause, i++) {
    const w = e as { message?: unknown; stack?: unknown; body?: unknown };
    parts.push(String(w.message), String(w.stack), JSON.stringify(w.body) ?? '');
  }
  return parts.join('\n');
}

/** No 8-character piece of any secret appears in `text`. */
function expectNoTrace(text: string, secrets: string[]): void {
  for (const s of secrets) for (let i = 0; i + 8 <= s.length; i++) expect(text, `a piece of ${s.slice(0, 4)}…`).not.toContain(s.slice(i, i + 8));
}

describe('vendor messages are redacted before they leave the adapter', () => {
  it.each(CASES)('$cloud', async (c) => {
    const { provider, secrets } = c.make();
    c.arm?.();
    const err = await provider.observe({ cloud: provider.name, region: c.region, ...(c.zone ? { zone: c.zone } : {}) }, 'redact-me').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderError);
    const all = everything(err);
    expectNoTrace(all, c.cloud === 'docker' ? [PLANTED] : secrets);
    expect(all).not.toMatch(/Bearer (?!\[REDACTED\])\S/i);
    expect((err as ProviderError).message, all).toMatch(
      c.cloud === 'nebius' ? /permission denied/ : c.cloud === 'gcp' ? /Invalid API key|INVALID_ARGUMENT|400/ : WORDS,
    );
  });
});

describe('redactText', () => {
  it('replaces held values and credential-shaped text, keeping the words around them', () => {
    const k = key();
    const out = redactText(
      `bad key ${k}; Authorization: Basic dXNlcjpwYXNz; api_key=abc123def; Credential=AKIA1234/2024/us-east-1/ec2/aws4_request, Signature=deadbeef`,
      [k],
    );
    expect(out).toBe(`bad key ${REDACTED}; Authorization: ${REDACTED}; api_key=${REDACTED}; Credential=${REDACTED}, Signature=${REDACTED}`);
  });
});
