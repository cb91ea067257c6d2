/**
 * The spec-judged contract suite: every request our adapters send and every answer our fixtures
 * serve in a contract life, validated against the vendor's published API definition (specs.ts says
 * which, and where CI gets it). Prints one summary line per cloud: the definition and its version,
 * requests and answers checked, mismatches, accepted differences.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startPricingFixture } from '../fixtures/aws/pricing';
import { startQuotasFixture } from '../fixtures/aws/service-quotas';
import { AwsPricing } from '../../src/providers/aws/pricing';
import { AwsQuotas } from '../../src/providers/aws/quotas';
import { motoMissing } from '../harness/moto';
import { checkSpecCloud, judgeExchanges, sortFindings, summaryLine, toExchange, type SpecReport } from './spec-check';
import { recordEc2Life, recordEc2ReservedLife, recordEc2SpotLife } from './spec-aws';
import { recordSpotLife } from './gcp-spot';
import { recordReservedLives } from './gcp-reserved';
import { NOT_JUDGED, SPEC_CONTRACTS } from './specs';
import { vendorsMissing } from './vendor';

type Line = SpecReport | { cloud: string; unavailable: string };

/** The failures of one cloud (each also printed, so a CI log names them all). */
const fail = (r: Line): string[] => {
  const out =
    'unavailable' in r ? [] : [...r.mismatches.map((m) => `mismatch: ${m}`), ...r.stale.map((s) => `accepted row no longer occurs (remove it): ${s}`)];
  for (const f of out) process.stdout.write(`spec ${f}\n`);
  return out;
};

describe.skipIf(vendorsMissing())("contract: requests and answers judged by the vendors' published API definitions", () => {
  const lines: Line[] = [];
  afterAll(() => {
    process.stdout.write(`\n${[...lines.map(summaryLine), ...NOT_JUDGED.map((n) => `spec ${n}`)].join('\n')}\n`);
  });

  for (const c of SPEC_CONTRACTS)
    it(`${c.cloud}: our requests and the fixture's answers fit the vendor's definition`, async () => {
      const r = await checkSpecCloud(c);
      lines.push(r);
      expect(fail(r)).toEqual([]);
    }, 300_000);

  it("gcp (spot): our spot life's requests (SPOT insert, preemption lists) and the fixture's answers fit the Discovery document", async () => {
    const gcp = SPEC_CONTRACTS.find((c) => c.cloud === 'gcp')!;
    const r = await judgeExchanges('gcp', gcp.source.kind, { ...gcp.source }, await recordSpotLife());
    const line: Line = r.missing
      ? { cloud: 'gcp (spot)', unavailable: `not judged: ${r.missing}` }
      : { cloud: 'gcp (spot)', spec: r.spec, validator: r.validator, requests: r.requests, answers: r.answers, ...sortFindings('gcp', r.findings) };
    lines.push(line);
    expect(fail(line)).toEqual([]);
    if (!r.missing) expect(r.answers).toBeGreaterThan(0);
  }, 300_000);

  it("gcp (reserved): our reservation and flex-start lives' requests (reservations list, targeted and FLEX_START inserts) and the fixture's answers fit the Discovery document", async () => {
    const gcp = SPEC_CONTRACTS.find((c) => c.cloud === 'gcp')!;
    const exchanges = await recordReservedLives();
    const bodies = exchanges.map((x) => JSON.stringify(x.body ?? null));
    for (const field of ['"consumeReservationType":"SPECIFIC_RESERVATION"', '"provisioningModel":"FLEX_START"', '"requestValidForDuration"'])
      expect(bodies.some((b) => b.includes(field))).toBe(true);
    const r = await judgeExchanges('gcp', gcp.source.kind, { ...gcp.source }, exchanges);
    const line: Line = r.missing
      ? { cloud: 'gcp (reserved)', unavailable: `not judged: ${r.missing}` }
      : { cloud: 'gcp (reserved)', spec: r.spec, validator: r.validator, requests: r.requests, answers: r.answers, ...sortFindings('gcp', r.findings) };
    lines.push(line);
    expect(fail(line)).toEqual([]);
    if (!r.missing) expect(r.answers).toBeGreaterThan(0);
  }, 300_000);

  /** AWS JSON services (fixtures of ours): requests and answers against botocore's models. */
  async function awsJson(
    cloud: string,
    service: string,
    drive: (url: string) => Promise<void>,
    start: () => Promise<{ url: string; requests: Parameters<typeof toExchange>[0][]; close(): Promise<void> }>,
  ): Promise<Line> {
    const fx = await start();
    try {
      await drive(fx.url);
      const r = await judgeExchanges(cloud, 'botocore-json', { service }, fx.requests.map(toExchange));
      if (r.missing) return { cloud, unavailable: `not judged: ${r.missing}` };
      return { cloud, spec: r.spec, validator: r.validator, requests: r.requests, answers: r.answers, ...sortFindings(cloud, r.findings) };
    } finally {
      await fx.close();
    }
  }

  const creds = { accessKeyId: 'AKIDOURS', secretAccessKey: 'ours' };
  it("aws (price list): our GetProducts requests and the fixture's answers fit botocore's pricing model", async () => {
    const r = await awsJson(
      'aws-pricing',
      'pricing',
      async (url) => void (await new AwsPricing({ endpoint: url, credentials: creds }).lookup(['us-east-1'], ['p5.48xlarge', 'g4dn.xlarge'])),
      startPricingFixture,
    );
    lines.push(r);
    expect(fail(r)).toEqual([]);
  }, 300_000);

  it("aws (service quotas): our GetServiceQuota requests and the fixture's answers fit botocore's service-quotas model", async () => {
    const r = await awsJson(
      'aws-quotas',
      'service-quotas',
      async (url) => {
        const q = new AwsQuotas({ endpoint: url, credentials: creds });
        for (const region of ['us-east-1', 'us-west-2']) await q.limits(region, ['L-DB2E81BA', 'L-417A185B']);
      },
      () => startQuotasFixture(['us-east-1']),
    );
    lines.push(r);
    expect(fail(r)).toEqual([]);
  }, 300_000);

  it.skipIf(motoMissing())(
    "aws (ec2): every EC2 request of our adapter's lives at moto (on-demand, spot, reserved), and our spot and reservation fixtures' answers, fit botocore's ec2 model",
    async () => {
      const exchanges = [...(await recordEc2Life()), ...(await recordEc2SpotLife()), ...(await recordEc2ReservedLife())];
      const bodies = exchanges.map((x) => String(x.body));
      for (const call of [
        'InstanceMarketOptions.MarketType=spot',
        'Action=DescribeSpotPriceHistory&',
        'Action=DescribeSpotInstanceRequests&',
        'CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId=',
        'InstanceMarketOptions.MarketType=capacity-block',
        'Action=DescribeCapacityReservations&',
        'Action=DescribeCapacityBlockOfferings&',
        'Action=PurchaseCapacityBlock&',
      ])
        expect(bodies.some((b) => b.includes(call))).toBe(true);
      expect(exchanges.filter((x) => String(x.body).startsWith('Action=PurchaseCapacityBlock&') && x.response).length).toBe(1);
      const r = await judgeExchanges('aws-ec2', 'botocore-query', { service: 'ec2' }, exchanges);
      const line: Line = r.missing
        ? { cloud: 'aws-ec2', unavailable: `not judged: ${r.missing}` }
        : {
            cloud: 'aws-ec2',
            spec: `${r.spec}, requests, and the answers of our spot and reservation fixtures (moto's answers are not ours to judge)`,
            validator: r.validator,
            requests: r.requests,
            answers: r.answers,
            ...sortFindings('aws-ec2', r.findings),
          };
      lines.push(line);
      expect(fail(line)).toEqual([]);
    },
    300_000,
  );
});
