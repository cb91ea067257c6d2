/**
 * The spec judge itself: a mismatch injected on purpose into a clean life's exchanges fails it, for
 * each kind of definition CI has (Discovery, botocore) and for OpenAPI (a small document of our own,
 * since CI has no vendor's); an accepted row that no longer occurs is reported stale.
 */
import { spotRequest, spotRequestsXml } from '../fixtures/aws/spot';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeExchanges as judgeOrSkip, recordLives, sortFindings, summaryLine, type Exchange } from './spec-check';
import { specKey } from './spec-accepted';
import { SPEC_CONTRACTS } from './specs';
import { vendorsMissing } from './vendor';

/** The judge, which these tests need: a definition missing fails them, whatever GPUPROV_REQUIRE_ALL says. */
async function judgeExchanges(...args: Parameters<typeof judgeOrSkip>): ReturnType<typeof judgeOrSkip> {
  const r = await judgeOrSkip(...args);
  if (r.missing) throw new Error(`the spec judge cannot run: ${r.missing}`);
  return r;
}

const GCP = SPEC_CONTRACTS.find((c) => c.cloud === 'gcp')!;
const DISCOVERY = { api: 'compute', version: 'v1' };

describe.skipIf(vendorsMissing())('the spec judge catches a mismatch injected on purpose', () => {
  it('gcp: a clean life has no finding; an instance status outside the enum and a number for machineType are two mismatches', async () => {
    const clean = await recordLives(GCP);
    expect((await judgeExchanges('gcp', 'discovery', DISCOVERY, clean)).findings).toEqual([]);

    const broken: Exchange[] = structuredClone(clean);
    const listed = (x: Exchange): { status?: string }[] => (x.response?.body as { items?: { status?: string }[] } | undefined)?.items ?? [];
    const list = broken.find((x) => x.method === 'GET' && /\/instances$/.test(x.path) && listed(x).length > 0);
    const create = broken.find((x) => x.method === 'POST' && /\/instances$/.test(x.path));
    if (!list || !create) throw new Error('the gcp life listed no instance or made no create');
    listed(list)[0]!.status = 'WARMING_UP';
    (create.body as Record<string, unknown>).machineType = 42;
    const r = await judgeExchanges('gcp', 'discovery', DISCOVERY, broken);
    const sorted = sortFindings('gcp', r.findings, []);
    expect([...sorted.mismatches].sort()).toEqual([
      expect.stringMatching(/^gcp answer GET \/compute\/v1\/projects\/\{project\}\/zones\/\{zone\}\/instances 200 body\.items\[\]\.status: enum \[/),
      'gcp request POST /compute/v1/projects/{project}/zones/{zone}/instances body.machineType: type "string"',
    ]);
    const line = summaryLine({ cloud: 'gcp', spec: r.spec, validator: r.validator, requests: r.requests, answers: r.answers, ...sorted });
    process.stdout.write(`injected: ${line}\n${sorted.mismatches.map((m) => `injected mismatch: ${m}`).join('\n')}\n`);
    expect(line).toMatch(/; 2 mismatches; 0 accepted differences/);
  }, 300_000);

  it('aws: a RunInstances with a word for MaxCount and a parameter EC2 does not have are two mismatches', async () => {
    const body = 'Action=RunInstances&Version=2016-11-15&ImageId=ami-0a1b2c3d4e5f60001&MinCount=1&MaxCount=many&InstanceType=g4dn.xlarge&Bogus.1.Name=x';
    const r = await judgeExchanges('aws-ec2', 'botocore-query', { service: 'ec2' }, [{ method: 'POST', path: '/', query: [], headers: {}, body }]);
    expect(r.findings.map(specKey)).toEqual([
      'aws-ec2 request POST RunInstances params.Bogus.N.Name: unknown member Bogus',
      'aws-ec2 request POST RunInstances params.MaxCount: type integer',
    ]);
  }, 300_000);

  it('aws: a spot answer with an element EC2 does not have, a state outside the enum and a word for a time is three mismatches', async () => {
    const marked = spotRequest('sir-1', 'i-0123456789abcdef0', 'marked-for-termination', '2026-12-04T01:02:03.000Z');
    const xml = spotRequestsXml([marked])
      .replace('<state>active</state>', '<state>running</state><bogus>1</bogus>')
      .replace('<updateTime>2026-12-04T01:02:03.000Z</updateTime>', '<updateTime>soon</updateTime>');
    const x = { method: 'POST', path: '/', query: [] as [string, string][], headers: {}, body: 'Action=DescribeSpotInstanceRequests&Version=2016-11-15' };
    const r = await judgeExchanges('aws-ec2', 'botocore-query', { service: 'ec2' }, [{ ...x, response: { status: 200, body: xml } }]);
    expect(r.answers).toBe(1);
    expect(r.findings.map(specKey).sort()).toEqual([
      'aws-ec2 answer POST DescribeSpotInstanceRequests 200 body.spotInstanceRequestSet[].bogus: unknown member',
      expect.stringMatching(/^aws-ec2 answer POST DescribeSpotInstanceRequests 200 body\.spotInstanceRequestSet\[\]\.state: enum \[/),
      'aws-ec2 answer POST DescribeSpotInstanceRequests 200 body.spotInstanceRequestSet[].status.updateTime: type timestamp',
    ]);
  }, 300_000);

  it('openapi: a wrong status, a missing required field, a value outside the enum and a plain-text answer are findings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuprov-spec-'));
    try {
      const doc = {
        openapi: '3.0.3',
        info: { title: 'judge test', version: '1' },
        servers: [{ url: 'https://api.example.test/v1' }],
        paths: {
          '/things/{id}': {
            get: {
              responses: {
                '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
              },
            },
          },
        },
        components: {
          schemas: {
            Thing: { type: 'object', required: ['id', 'state'], properties: { id: { type: 'string' }, state: { type: 'string', enum: ['up', 'down'] } } },
          },
        },
      };
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const x = (status: number, contentType: string, body: unknown): Exchange => ({
        method: 'GET',
        path: '/v1/things/t1',
        query: [],
        headers: {},
        body: undefined,
        response: { status, contentType, body },
      });
      const ok = await judgeExchanges('t', 'openapi', { path: file }, [x(200, 'application/json', { id: 't1', state: 'up' })]);
      expect(ok.findings).toEqual([]);
      const bad = await judgeExchanges('t', 'openapi', { path: file }, [
        x(201, 'application/json', { id: 't1', state: 'up' }),
        x(200, 'application/json', { state: 'sideways' }),
        x(200, 'text/plain', 't1'),
      ]);
      expect(bad.findings.map(specKey)).toEqual([
        "t answer GET /things/{id} status: 201 not in ['200']",
        't answer GET /things/{id} 200 body: required id',
        't answer GET /things/{id} 200 body.state: enum ["up", "down"]',
        "t answer GET /things/{id} 200 content-type: text/plain not in ['application/json']",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('an accepted row that no longer occurs is stale, one that occurs is counted', () => {
    const f = { cloud: 'c', where: 'answer' as const, method: 'GET', template: '/x', at: '200 body', rule: 'required id' };
    const rows = [
      { ...f, why: 'occurs' },
      { ...f, rule: 'required name', why: 'fixed since' },
    ];
    expect(sortFindings('c', [f], rows)).toEqual({ mismatches: [], accepted: 1, stale: ['c answer GET /x 200 body: required name'] });
  });
});
