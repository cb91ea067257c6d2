/**
 * The AWS quota pre-check through the plan and a launch: moto (EC2, two regions) and the Service
 * Quotas fixture (moto serves no ec2 quota codes). A region with no G quota left is skipped without
 * an attempt and the plan says why; running instances use up the quota; a quota not read keeps the
 * offers and the plan says so.
 */
import { EC2Client, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import type { SshProber } from '../../../src/ssh';
import type { SshIdentity } from '../../../src/ssh/identity';
import { ProviderRegistry } from '../../../src/providers/registry';
import { motoMissing } from '../../harness/moto';
import { requireServer } from '../../harness/temporal';
import { startQuotasFixture, type QuotasFixture } from '../../fixtures/aws/service-quotas';
import { startLab, waitStage, type Lab } from '../../workflows/helpers';
import { startAwsDouble, type AwsDouble } from './double';

const REGIONS = ['us-east-1', 'us-west-2'];
// moto's own image (the fixture AMIs break moto's second region, see double.ts); plan never looks it up.
const MOTO_AMI = 'ami-03cf127a';
const ssh: SshIdentity = { privateKey: '', privateKeyPath: '/nonexistent', publicKey: 'ssh-ed25519 AAAAplanonly plan@test', fingerprint: 'SHA256:planonly' };
const stubProbe: SshProber = async (t) => ({
  fingerprint: `SHA256:stand-in-${t.host}-${t.port}`,
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStandInHostKeyForFixtures',
});

describe.skipIf(motoMissing())('aws quota pre-check on moto + the Service Quotas fixture', () => {
  let d: AwsDouble;
  let fx: QuotasFixture;
  let activities: ReturnType<typeof createActivities>;
  beforeAll(async () => {
    fx = await startQuotasFixture(REGIONS);
    d = await startAwsDouble({ regions: REGIONS, quotasEndpoint: fx.url, quotaCacheMs: 0, amiId: MOTO_AMI }, false);
    activities = createActivities({ registry: new ProviderRegistry([d.provider]), ssh, owner: 'test' });
  });
  afterAll(async () => {
    await d?.close();
    await fx?.close();
  });

  const t4 = () => activities.planOffers({ request: { vmName: 'q', k8s: false, gpu: { model: 'T4', count: 1 } }, clouds: ['aws'] });

  it('with EC2 overridden and no quota endpoint, there is no pre-check (a test never reaches AWS)', async () => {
    const plain = d.makeProvider({ quotasEndpoint: undefined });
    expect(await plain.quotaShortfalls((await plain.plan({ vmName: 'q', k8s: false })).slice(0, 2))).toEqual([]);
  });

  it('a region with 0 G quota: its offers are dropped and the plan says why', async () => {
    fx.set('us-east-1', 'L-DB2E81BA', 0);
    try {
      const out = await t4();
      expect(out.offers.map((o) => `${o.region}/${o.instanceType}`)).toEqual(['us-west-2/g4dn.xlarge', 'us-west-2/g4dn.2xlarge']);
      expect(out.quotaSkipped).toEqual([
        {
          cloud: 'aws',
          region: 'us-east-1',
          instanceType: 'g4dn.xlarge',
          message: 'quota L-DB2E81BA (Running On-Demand G and VT instances) in us-east-1: 0 of 0 vCPUs free (0 in use), g4dn.xlarge needs 4',
        },
        expect.objectContaining({ region: 'us-east-1', instanceType: 'g4dn.2xlarge' }),
      ]);
      expect(out.quotaUnchecked).toBeUndefined();
    } finally {
      fx.set('us-east-1', 'L-DB2E81BA', 64);
    }
  });

  it("the account's running instances of the family use up the quota", async () => {
    fx.set('us-west-2', 'L-DB2E81BA', 10);
    const west = d.makeProvider({ regions: ['us-west-2'], quotasEndpoint: fx.url, quotaCacheMs: 0 });
    const offers = (await west.plan({ vmName: 'q', k8s: false })).filter((o) => o.instanceType.startsWith('g4dn.') && (o.vcpus ?? 0) <= 8);
    expect(await west.quotaShortfalls(offers)).toEqual([]);
    const ids: string[] = [];
    const raw = new EC2Client({ region: 'us-west-2', endpoint: d.url, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' }, maxAttempts: 1 });
    try {
      const run = await raw.send(new RunInstancesCommand({ ImageId: MOTO_AMI, InstanceType: 'g4dn.xlarge', MinCount: 1, MaxCount: 1 }));
      ids.push(...(run.Instances ?? []).flatMap((i) => i.InstanceId ?? []));
      const short = await west.quotaShortfalls(offers);
      expect(short).toEqual([expect.objectContaining({ instanceType: 'g4dn.2xlarge', message: expect.stringContaining('6 of 10 vCPUs free (4 in use)') })]);
    } finally {
      await raw.send(new TerminateInstancesCommand({ InstanceIds: ids }));
      raw.destroy();
      fx.set('us-west-2', 'L-DB2E81BA', 64);
    }
  });

  it('quotas not read (denied): nothing is dropped and the plan says each quota went unchecked', async () => {
    fx.deny(true);
    try {
      const out = await t4();
      expect(out.offers.map((o) => o.region).sort()).toEqual(['us-east-1', 'us-east-1', 'us-west-2', 'us-west-2']);
      expect(out.quotaSkipped).toBeUndefined();
      expect(out.quotaUnchecked).toEqual(
        REGIONS.map((region) => ({
          cloud: 'aws',
          region,
          message: `quota L-DB2E81BA in ${region} not checked (AccessDeniedException: grant servicequotas:GetServiceQuota): its offers are kept`,
        })),
      );
    } finally {
      fx.deny(false);
    }
  });

  describe.skipIf(!requireServer())('through the VM workflow', () => {
    let lab: Lab;
    beforeAll(async () => {
      lab = await startLab({ providers: [d.provider], prober: stubProbe });
    });
    afterAll(async () => {
      await lab?.stop();
    });

    it('the zero-quota region gets no attempt; the launch is ready in the other region', async () => {
      fx.set('us-east-1', 'L-DB2E81BA', 0);
      try {
        const sentBefore = d.sent.length;
        const h = await lab.start({ name: 'awsquota1', gpu: { model: 'T4', count: 1 }, clouds: ['aws'], k8s: 'off' });
        const s = await waitStage(h, 'ready');
        expect(s.attempts.map((a) => `${a.offer.region}/${a.offer.instanceType}:${a.outcome}`)).toEqual(['us-west-2/g4dn.xlarge:ready']);
        expect(d.sent.slice(sentBefore).filter((c) => c.command === 'RunInstances')).toHaveLength(1);
        const history = await h.fetchHistory();
        const data = history.events?.find((e) => e.activityTaskCompletedEventAttributes)?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
        const plan = JSON.parse(Buffer.from(data ?? new Uint8Array()).toString()) as { quotaSkipped?: { region: string; message: string }[] };
        expect(plan.quotaSkipped?.map((q) => q.message)).toEqual([
          expect.stringContaining('quota L-DB2E81BA (Running On-Demand G and VT instances) in us-east-1: 0 of 0 vCPUs free'),
          expect.stringContaining('in us-east-1: 0 of 0 vCPUs free'),
        ]);
        await h.signal('teardown');
        await h.result();
      } finally {
        fx.set('us-east-1', 'L-DB2E81BA', 64);
      }
    });
  });
});
