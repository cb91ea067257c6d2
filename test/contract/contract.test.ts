/**
 * The contract suite: our fixtures against the vendors' own published clients, and our adapters'
 * requests against the vendors' requests for the same calls (see check.ts and known.ts).
 * Prints one summary line: each cloud, the client and version it was checked against, and its
 * mismatch count.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EC2_ERRORS, UNKNOWN_TYPE, errorXml } from '../fixtures/aws/errors';
import { livePrice, startPricingFixture } from '../fixtures/aws/pricing';
import { DEFAULT_LIMITS, startQuotasFixture } from '../fixtures/aws/service-quotas';
import { AwsQuotas } from '../../src/providers/aws/quotas';
import { AwsPricing, productFilters } from '../../src/providers/aws/pricing';
import type { RecordedRequest } from '../fixtures/http-fixture';
import { checkHttpCloud, judge, type CloudReport } from './check';
import { checkGcpBilling } from './gcp-billing';
import { checkGcpSpot } from './gcp-spot';
import { checkGcpQueued, checkGcpReserved } from './gcp-reserved';
import { checkAwsRunInstances } from './aws-run';
import { checkAwsSpot } from './aws-spot';
import { checkRunPodCreate } from './runpod-create';
import { motoMissing } from '../harness/moto';
import { HTTP_CONTRACTS } from './clouds';
import { checkNebiusGrpc } from './nebius-grpc';
import { PROTO_ROOT, compareNebiusProtos } from './nebius-protos';
import { pinned, runDriver, vendorsMissing } from './vendor';

/** What identifies an AWS JSON call on the wire: path, target, protocol, signing scope and body; sorted, so order does not count. */
function awsWire(reqs: RecordedRequest[]): unknown[] {
  const wire = (q: RecordedRequest): unknown => ({
    method: q.method,
    path: q.path,
    target: q.headers['x-amz-target'],
    contentType: q.headers['content-type'],
    scope: /Credential=[^/]+\/\d{8}\/([^,]+),/.exec(String(q.headers.authorization))?.[1],
    body: q.body,
  });
  return reqs.map(wire).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
}

/** Clouds not checked against a vendor client, and why. */
const NOT_CHECKED = [
  `runpod runpod==${pinned('runpod')} requests not comparable (the SDK speaks GraphQL only; our adapter and fixture speak REST v2)`,
  'massedcompute (no vendor client)',
  'local (not a vendor cloud)',
  'docker (not a vendor cloud)',
];

describe.skipIf(vendorsMissing())("contract: the vendors' clients against our fixtures", () => {
  const reports: CloudReport[] = [];
  afterAll(() => {
    const done = reports.map(
      (r) =>
        `${r.cloud} ${r.client}==${r.version} ${r.mismatches} mismatch${r.mismatches === 1 ? '' : 'es'}${r.accepted ? ` (+${r.accepted} accepted difference${r.accepted === 1 ? '' : 's'})` : ''}`,
    );
    process.stdout.write(`\ncontract summary: ${[...done, ...NOT_CHECKED].join('; ')}\n`);
  });

  for (const c of HTTP_CONTRACTS) {
    it(`${c.cloud}: the fixture serves ${c.client}, and our requests match its requests`, async () => {
      const report = await checkHttpCloud(c);
      reports.push(report);
      for (const n of report.notes) process.stdout.write(`contract ${c.cloud}: ${n}\n`);
      expect(report.failures).toEqual([]);
    }, 300_000);
    const imageDisk = c.imageDisk;
    if (imageDisk)
      it(`${c.cloud}: with --image${imageDisk.diskGb === undefined ? '' : ' and --disk-gb'}, our create matches ${c.client}'s`, async () => {
        const report = await checkHttpCloud(c, undefined, imageDisk);
        reports.push(report);
        for (const n of report.notes) process.stdout.write(`contract ${report.cloud}: ${n}\n`);
        expect(report.failures).toEqual([]);
      }, 300_000);
    const spot = c.spot;
    if (spot)
      it(`${c.cloud}: with --spot ${spot}, our spot plan and create match ${c.client}'s`, async () => {
        const report = { ...(await checkHttpCloud({ ...c, request: { ...c.request, spot } })), cloud: `${c.cloud} (--spot ${spot})` };
        reports.push(report);
        for (const n of report.notes) process.stdout.write(`contract ${report.cloud}: ${n}\n`);
        expect(report.failures).toEqual([]);
      }, 300_000);
  }

  it("nebius: our .proto files declare what the SDK's descriptors declare, and our addresses are the SDK's", async () => {
    const r = await compareNebiusProtos();
    expect(r.differences).toEqual([]);
    expect(r.checked).toBeGreaterThan(40);
    const found = r.addresses
      .filter((a) => a.ours !== a.sdk)
      .map((a) => ({ cloud: 'nebius', call: a.service, aspect: 'address', ours: a.ours ?? 'absent', vendor: a.sdk }));
    const j = judge('nebius', found);
    reports.push({
      cloud: 'nebius (protos, addresses)',
      client: 'nebius',
      version: r.sdk,
      mismatches: j.mismatches,
      accepted: j.accepted,
      failures: j.failures,
      notes: [],
    });
    process.stdout.write(`contract nebius: ${r.checked} messages, enums and services compared with the SDK's descriptors\n`);
    expect(j.failures).toEqual([]);
  }, 300_000);

  /** Records a botocore driver's run against an AWS fixture (failed calls, and our requests unlike boto3's); returns the failed calls. */
  function reportWire(
    cloud: string,
    r: Awaited<ReturnType<typeof runDriver>>,
    ours: Parameters<typeof awsWire>[0],
    theirs: Parameters<typeof awsWire>[0],
  ): string[] {
    const failures = r.calls.filter((c) => !c.ok).map((c) => `${c.call}: ${c.error ?? c.skipped ?? ''}`);
    const same = JSON.stringify(awsWire(ours)) === JSON.stringify(awsWire(theirs));
    const found = same ? [] : [`ours ${JSON.stringify(awsWire(ours))}, boto3 ${JSON.stringify(awsWire(theirs))}`];
    reports.push({
      cloud,
      client: r.client,
      version: r.version,
      mismatches: failures.length + found.length,
      accepted: 0,
      failures: [...failures, ...found],
      notes: r.notes,
    });
    return failures;
  }

  it('nebius: the fixture serves the nebius SDK every RPC our adapter makes', async () => {
    const report = await checkNebiusGrpc();
    reports.push(report);
    for (const n of report.notes) process.stdout.write(`contract nebius: ${n}\n`);
    expect(report.failures).toEqual([]);
  }, 300_000);

  it('aws: our EC2 error bodies parse in botocore with their codes and messages', async () => {
    const errors = [...EC2_ERRORS, UNKNOWN_TYPE].map((e) => ({ code: e.code, status: e.status, message: e.message, xml: errorXml(e.code, e.message) }));
    const r = await runDriver('aws.py', { url: '', errors });
    const failures = r.calls.filter((c) => !c.ok).map((c) => `${c.call}: ${c.error ?? c.skipped ?? ''}`);
    reports.push({ cloud: 'aws (error bodies)', client: r.client, version: r.version, mismatches: failures.length, accepted: 0, failures, notes: r.notes });
    expect(r.calls).toHaveLength(errors.length);
    expect(failures).toEqual([]);
  }, 300_000);

  it("aws: the Price List fixture serves boto3's pricing client, and our GetProducts requests are boto3's", async () => {
    const fx = await startPricingFixture();
    try {
      const types = ['p5.48xlarge', 'g4dn.xlarge'];
      await new AwsPricing({ endpoint: fx.url, credentials: { accessKeyId: 'AKIDOURS', secretAccessKey: 'ours' } }).lookup(['us-east-1'], types);
      const ours = fx.requests.splice(0);
      const queries = types.map((t) => ({ instanceType: t, filters: productFilters('us-east-1', t), price: livePrice(t) }));
      const r = await runDriver('aws_pricing.py', { url: fx.url, queries });
      const failures = reportWire('aws (price list)', r, ours, fx.requests);
      expect(r.calls).toHaveLength(types.length);
      expect(failures).toEqual([]);
      expect(awsWire(ours)).toEqual(awsWire(fx.requests));
    } finally {
      await fx.close();
    }
  }, 300_000);

  it("aws: the Service Quotas fixture serves boto3's service-quotas client, and our GetServiceQuota requests are boto3's", async () => {
    const fx = await startQuotasFixture(['us-east-1', 'us-west-2']);
    try {
      fx.set('us-west-2', 'L-417A185B', undefined);
      const codes = ['L-DB2E81BA', 'L-417A185B', 'L-1216C47A'];
      const regions = ['us-east-1', 'us-west-2'];
      const quotas = new AwsQuotas({ endpoint: fx.url, credentials: { accessKeyId: 'AKIDOURS', secretAccessKey: 'ours' } });
      for (const r of regions) await quotas.limits(r, codes);
      const ours = fx.requests.splice(0);
      const queries = regions.flatMap((region) =>
        codes.map((code) =>
          region === 'us-west-2' && code === 'L-417A185B' ? { region, code, error: 'NoSuchResourceException' } : { region, code, value: DEFAULT_LIMITS[code] },
        ),
      );
      const r = await runDriver('aws_quotas.py', { url: fx.url, queries });
      const failures = reportWire('aws (service quotas)', r, ours, fx.requests);
      expect(r.calls).toHaveLength(queries.length);
      expect(failures).toEqual([]);
      expect(awsWire(ours)).toEqual(awsWire(fx.requests));
    } finally {
      await fx.close();
    }
  }, 300_000);

  it.skipIf(motoMissing())(
    "aws: with --image and --disk-gb, our RunInstances image and root-disk parameters are boto3's (at moto)",
    async () => {
      const r = await checkAwsRunInstances();
      reports.push(r);
      process.stdout.write(`contract aws: image and disk parameters ${r.ours.join('&')}\n`);
      expect(r.failures).toEqual([]);
      expect(r.ours.some((p) => p.startsWith('BlockDeviceMapping.1.Ebs.VolumeSize='))).toBe(true);
    },
    300_000,
  );

  it.skipIf(motoMissing())(
    "aws: our spot fixtures parse in botocore with their values, and our spot requests' parameters are boto3's (at moto)",
    async () => {
      const r = await checkAwsSpot();
      reports.push(r);
      process.stdout.write(`contract aws: spot parameters ${Object.values(r.ours).flat().join('&')}\n`);
      expect(r.failures).toEqual([]);
      expect(r.ours.RunInstances).toContain('InstanceMarketOptions.MarketType=spot');
    },
    300_000,
  );

  it("runpod: our create's image and disk build the runpod SDK's deploy mutation (the SDK speaks GraphQL only)", async () => {
    const r = await checkRunPodCreate();
    reports.push(r);
    expect(r.failures).toEqual([]);
  }, 300_000);

  it("gcp: the billing fixture serves google-cloud-billing's list_skus through every page, and our SKU requests are its requests", async () => {
    const r = await checkGcpBilling();
    reports.push(r);
    for (const n of r.notes) process.stdout.write(`contract gcp billing: ${n}\n`);
    expect(r.failures).toEqual([]);
    expect(r.pages.ours).toBeGreaterThan(1);
    expect(r.pages.vendor).toBe(r.pages.ours);
  }, 300_000);

  it("gcp: our spot life (SPOT insert, preemption lists) matches google-cloud-compute's requests, and the client parses the fixture's answers", async () => {
    const r = await checkGcpSpot();
    reports.push(r);
    for (const n of r.notes) process.stdout.write(`contract gcp spot: ${n}\n`);
    expect(r.failures).toEqual([]);
  }, 300_000);

  it("gcp: our life into a specific reservation (reservations list, targeted insert) matches google-cloud-compute's requests, and the client parses the fixture's answers", async () => {
    const r = await checkGcpReserved();
    reports.push(r);
    for (const n of r.notes) process.stdout.write(`contract gcp reservation: ${n}\n`);
    expect(r.failures).toEqual([]);
  }, 300_000);

  it("gcp: our queued flex-start life (FLEX_START insert, Pending until capacity) matches google-cloud-compute's requests, and the client parses the fixture's answers", async () => {
    const r = await checkGcpQueued();
    reports.push(r);
    for (const n of r.notes) process.stdout.write(`contract gcp flex-start: ${n}\n`);
    expect(r.failures).toEqual([]);
  }, 300_000);

  it('nebius: a field number changed on purpose in a copy of our protos is caught', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuprov-protos-'));
    try {
      cpSync(PROTO_ROOT, dir, { recursive: true });
      const file = join(dir, 'nebius/vpc/v1/vpc.proto');
      writeFileSync(file, readFileSync(file, 'utf8').replace('string page_token = 3;', 'string page_token = 4;'));
      const r = await compareNebiusProtos(dir);
      expect(r.differences).toEqual(['nebius.vpc.v1.ListSubnetsRequest.page_token: number ours 4, SDK 3']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
