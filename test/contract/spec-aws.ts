/**
 * The EC2 requests of one adapter life at moto (plan, prepare, create with `--image`/`--disk-gb`,
 * observe, delete, cleanup), as the AWS SDK serialized them, for the spec judge; and one spot life
 * (plan with `--spot only`, the spot create, observe of a spot instance marked for termination,
 * delete), whose spot answers are our fixtures (test/fixtures/aws/spot.ts) and are judged too; and
 * one reserved life (reservations, targeted creates, capacity blocks bought once), whose reservation
 * answers come from test/fixtures/aws/reserved.ts and are judged too.
 * moto's own answers are moto's, not a fixture of ours, so only their requests are judged.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { locationOf } from '../../src/core/offers';
import type { Offer } from '../../src/core/provider';
import { AWS_IMAGE_DISK } from './aws-run';
import { exercise, SPEC } from './check';
import type { Exchange } from './spec-check';
import { spotPriceHistoryXml, spotRequest, spotRequestsXml, withSpotRequestIds } from '../fixtures/aws/spot';
import { ReservationStore, type ReservationRow } from '../fixtures/aws/reserved';
import { startAwsDouble, type AwsDouble } from '../providers/aws/double';

/** A recorder of every request body our adapter's EC2 clients send. */
function recorder(): { out: Exchange[]; record: (client: EC2Client) => void } {
  const out: Exchange[] = [];
  const record = (client: EC2Client): void => {
    client.middlewareStack.add(
      (next) => async (args) => {
        const body = (args.request as { body?: unknown }).body;
        if (typeof body === 'string') out.push({ method: 'POST', path: '/', query: [], headers: {}, body });
        return next(args);
      },
      { step: 'build', name: 'gpuprovSpecRecord' },
    );
  };
  return { out, record };
}

export async function recordEc2Life(): Promise<Exchange[]> {
  const d = await startAwsDouble();
  try {
    const { out, record } = recorder();
    const provider = d.makeProvider({ configureClient: record });
    await exercise(provider, { vmName: 'contract', gpu: { model: 'T4', count: 1 }, k8s: false, ...AWS_IMAGE_DISK }, { ...SPEC, ...AWS_IMAGE_DISK });
    return out;
  } finally {
    await d.close();
  }
}

const SIR = 'sir-0c0ffee0c0ffee0c0';

/** The spot life; each exchange our fixture answered carries that answer. */
export async function recordEc2SpotLife(): Promise<Exchange[]> {
  const d: AwsDouble = await startAwsDouble();
  try {
    const { out, record } = recorder();
    const provider = d.makeProvider({ configureClient: record });
    const served = (action: string, xml: string): void => {
      const x = [...out].reverse().find((e) => typeof e.body === 'string' && e.body.startsWith(`Action=${action}&`));
      if (!x) throw new Error(`aws spot life: no ${action} was sent`);
      x.response = { status: 200, contentType: 'text/xml;charset=UTF-8', body: xml };
    };
    const prices = spotPriceHistoryXml();
    d.answer('DescribeSpotPriceHistory', prices);
    const offers = await provider.plan({ vmName: 'contract', gpu: { model: 'T4', count: 1 }, k8s: false, spot: 'only' });
    served('DescribeSpotPriceHistory', prices);
    const offer = offers.find((o) => o.market === 'spot' && o.instanceType === 'g4dn.xlarge');
    if (!offer) throw new Error('aws spot life: no spot offer planned');
    const spec = { ...SPEC, vmName: 'contract-spot', idempotencyKey: 'contract/spot' };
    const id = await provider.create(offer, await provider.prepare(offer, spec), spec);
    d.rewrite('DescribeInstances', (xml) => withSpotRequestIds(xml, (i) => (i === id ? SIR : undefined)));
    const requests = spotRequestsXml([spotRequest(SIR, id, 'marked-for-termination', '2026-12-04T01:02:03.000Z')]);
    d.answer('DescribeSpotInstanceRequests', requests);
    const seen = await provider.observe(locationOf(offer), spec.vmName);
    if (!seen[0]?.preemption) throw new Error('aws spot life: the marked instance was observed without its preemption');
    served('DescribeSpotInstanceRequests', requests);
    d.rewrite('DescribeInstances', undefined);
    await provider.delete(locationOf(offer), spec.vmName, [id]);
    await provider.cleanup(locationOf(offer), spec.vmName);
    return out;
  } finally {
    await d.close();
  }
}

/** The account's reservations in the reserved life: an ODCR with room and one full. */
const RESERVATIONS: ReservationRow[] = [
  { id: 'cr-0123456789abcdef0', instanceType: 'g4dn.xlarge', zone: 'us-east-1b', total: 2, free: 1, state: 'active', start: '2026-12-01T08:00:00.000Z' },
  {
    id: 'cr-0fedcba9876543210',
    instanceType: 'g4dn.xlarge',
    zone: 'us-east-1c',
    total: 1,
    free: 0,
    state: 'active',
    start: '2026-12-01T08:00:00.000Z',
    end: '2027-01-01T00:00:00.000Z',
  },
];

/**
 * The reserved life: every usable reservation, one by id, the targeted create into it (moto
 * launches it), capacity block offerings, a purchase and its retry, the bought block planned and
 * launched into (`MarketType capacity-block`). The reservation calls are answered by the fixture
 * store (moto serves none of them); each exchange it answered carries that answer.
 */
export async function recordEc2ReservedLife(): Promise<Exchange[]> {
  const d: AwsDouble = await startAwsDouble();
  try {
    const { out, record } = recorder();
    const provider = d.makeProvider({ configureClient: record });
    const store = new ReservationStore(RESERVATIONS);
    d.serve((command, input) => store.serve(command, input));
    const launch = async (offer: Offer | undefined, vmName: string): Promise<void> => {
      if (!offer) throw new Error(`aws reserved life: no reserved offer for ${vmName}`);
      const spec = { ...SPEC, vmName, idempotencyKey: `contract/${vmName}` };
      const id = await provider.create(offer, await provider.prepare(offer, spec), spec);
      await provider.delete(locationOf(offer), spec.vmName, [id]);
      await provider.cleanup(locationOf(offer), spec.vmName);
    };
    await provider.plan({ vmName: 'contract', k8s: false, reserved: { kind: 'reservation' } });
    await launch((await provider.plan({ vmName: 'contract', k8s: false, reserved: { kind: 'reservation', id: RESERVATIONS[0]!.id } }))[0], 'contract-odcr');
    const [offering] = await provider.blockOfferings({ gpuModel: 'H100', count: 1, durationHours: 24, startAfter: '2026-12-07T00:00:00.000Z' });
    if (!offering) throw new Error('aws reserved life: no block offering');
    const block = await provider.buyBlock(offering, 'contract/block');
    await provider.buyBlock(offering, 'contract/block');
    Object.assign(
      store.rows.find((r) => r.id === block.id)!,
      { state: 'active', free: 1 },
    );
    await launch(
      (await provider.plan({ vmName: 'contract', k8s: false, reserved: { kind: 'capacity-block', offeringId: offering.offeringId } }))[0],
      'contract-block',
    );
    // The nth exchange of an action the store answered carries its nth answer.
    for (const action of new Set(store.answered.map((a) => a.action))) {
      const answers = store.answered.filter((a) => a.action === action);
      const asked = out.filter((x) => typeof x.body === 'string' && x.body.startsWith(`Action=${action}&`));
      if (asked.length !== answers.length) throw new Error(`aws reserved life: ${asked.length} ${action} sent, ${answers.length} answered`);
      asked.forEach((x, i) => (x.response = { status: 200, contentType: 'text/xml;charset=UTF-8', body: answers[i]!.xml }));
    }
    if (store.purchases !== 1) throw new Error(`aws reserved life: ${store.purchases} purchases for one key`);
    return out;
  } finally {
    d.serve(undefined);
    await d.close();
  }
}
