/**
 * The AWS vCPU quota pre-check: the family → quota table, the verdicts (limit − vCPUs running),
 * Service Quotas reads against the fixture (moto serves only vpc codes), and quotas not read
 * (denied, no such code, no answer) judging nothing.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer } from '../../../src/core/provider';
import type { Ec2Instance } from '../../../src/providers/aws/map';
import { AwsQuotas, quotaOf, quotaVerdicts, type QuotaLimit } from '../../../src/providers/aws/quotas';
import { startQuotasFixture, type QuotasFixture } from '../../fixtures/aws/service-quotas';

const CREDS = { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' };
const offer = (instanceType: string, vcpus: number, region = 'us-east-1'): Offer => ({ cloud: 'aws', region, instanceType, vcpus, spot: false });
const running = (id: string, type: string, lifecycle?: string): Ec2Instance => ({
  InstanceId: id,
  InstanceType: type,
  State: { Name: 'running' },
  ...(lifecycle ? { InstanceLifecycle: lifecycle } : {}),
});

describe('aws quota table and verdicts', () => {
  it('maps instance families to their vCPU quota, on-demand and spot', () => {
    expect(quotaOf('g4dn.xlarge')?.code).toBe('L-DB2E81BA');
    expect(quotaOf('vt1.3xlarge')?.code).toBe('L-DB2E81BA');
    expect(quotaOf('gr6.4xlarge')?.code).toBe('L-DB2E81BA');
    expect(quotaOf('p5.48xlarge')?.code).toBe('L-417A185B');
    expect(quotaOf('t3.micro')?.code).toBe('L-1216C47A');
    expect(quotaOf('im4gn.large')?.code).toBe('L-1216C47A');
    expect(quotaOf('g5.xlarge', true)?.code).toBe('L-3819A6DF');
    expect(quotaOf('p4d.24xlarge', true)?.code).toBe('L-7212CCBC');
    for (const other of ['inf2.xlarge', 'trn1.2xlarge', 'dl1.24xlarge', 'x2idn.16xlarge', 'u-6tb1.metal', 'mac1.metal', 'f1.2xlarge'])
      expect(quotaOf(other)).toBeUndefined();
  });

  it('skips offers that do not fit the limit less the vCPUs running in the family; spot and other families do not count', () => {
    const limits = new Map<string, QuotaLimit>([['L-DB2E81BA', { value: 16 }]]);
    const inUse = [running('i-1', 'g4dn.2xlarge'), running('i-2', 'g5.xlarge', 'spot'), running('i-3', 't3.micro'), running('i-4', 'p5.48xlarge')];
    const v = quotaVerdicts('us-east-1', [offer('g4dn.xlarge', 4), offer('g4dn.2xlarge', 8), offer('g4dn.12xlarge', 48)], limits, inUse);
    expect(v).toEqual([
      {
        region: 'us-east-1',
        instanceType: 'g4dn.12xlarge',
        message: 'quota L-DB2E81BA (Running On-Demand G and VT instances) in us-east-1: 8 of 16 vCPUs free (8 in use), g4dn.12xlarge needs 48',
      },
    ]);
  });

  it('a quota not read, usage not listed, or an instance of unknown size: no skip, one note per quota', () => {
    const offers = [offer('g4dn.xlarge', 4), offer('p5.48xlarge', 192), offer('t3.micro', 2)];
    const limits = new Map<string, QuotaLimit>([
      ['L-DB2E81BA', { unknown: 'AccessDeniedException: grant servicequotas:GetServiceQuota' }],
      ['L-417A185B', { value: 0 }],
      ['L-1216C47A', { value: 0 }],
    ]);
    const denied = quotaVerdicts('us-east-1', offers, limits, [running('i-9', 'm9.weird')]);
    expect(denied.map((x) => ('unknown' in x ? `? ${x.message}` : x.instanceType))).toEqual([
      '? quota L-DB2E81BA in us-east-1 not checked (AccessDeniedException: grant servicequotas:GetServiceQuota): its offers are kept',
      '? quota L-1216C47A in us-east-1 not checked (vCPUs of i-9 (m9.weird) unknown): its offers are kept',
      'p5.48xlarge',
    ]);
    const unlisted = quotaVerdicts('us-east-1', offers, limits, { unknown: 'running instances not listed: AuthFailure' });
    expect(unlisted.every((x) => 'unknown' in x)).toBe(true);
    expect(unlisted).toHaveLength(3);
  });
});

describe('aws Service Quotas reads (fixture)', () => {
  let fx: QuotasFixture;
  beforeAll(async () => {
    fx = await startQuotasFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('reads each limit in its region once per cache period', async () => {
    fx.set('us-west-2', 'L-DB2E81BA', 0);
    const q = new AwsQuotas({ endpoint: fx.url, credentials: CREDS });
    const before = fx.calls().length;
    expect(await q.limits('us-west-2', ['L-DB2E81BA', 'L-417A185B'])).toEqual(
      new Map([
        ['L-DB2E81BA', { value: 0 }],
        ['L-417A185B', { value: 192 }],
      ]),
    );
    expect(fx.calls().slice(before).sort()).toEqual(['us-west-2/L-417A185B', 'us-west-2/L-DB2E81BA']);
    await q.limits('us-west-2', ['L-DB2E81BA']);
    expect(fx.calls()).toHaveLength(before + 2);
    fx.set('us-west-2', 'L-DB2E81BA', 64);
  });

  it('denied, no such code, no answer: unknown with the reason and never the vendor text', async () => {
    const q = new AwsQuotas({ endpoint: fx.url, credentials: CREDS, cacheMs: 0 });
    fx.set('us-east-1', 'L-417A185B', undefined);
    expect((await q.limits('us-east-1', ['L-417A185B'])).get('L-417A185B')).toEqual({ unknown: 'NoSuchResourceException: no such quota in this region' });
    fx.deny(true);
    try {
      const denied = (await q.limits('us-east-1', ['L-DB2E81BA'])).get('L-DB2E81BA');
      expect(denied).toEqual({ unknown: 'AccessDeniedException: grant servicequotas:GetServiceQuota' });
      expect(JSON.stringify(denied)).not.toContain('arn:aws');
    } finally {
      fx.deny(false);
      fx.set('us-east-1', 'L-417A185B', 192);
    }
    const port = await new Promise<number>((ok) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(p));
      });
    });
    const closed = await new AwsQuotas({ endpoint: `http://127.0.0.1:${port}`, credentials: CREDS }).limits('us-east-1', ['L-DB2E81BA']);
    expect(closed.get('L-DB2E81BA')).toEqual({ unknown: 'ECONNREFUSED' });
  });
});
