/**
 * AWS spot: our spot fixtures' answers through botocore's EC2 parser (each read back with the values
 * the fixture meant), and our three spot requests (as the AWS SDK serialized them in the spot life
 * of spec-aws.ts) against boto3's for the same calls at moto: the spot parameters, names and values,
 * must be boto3's (the times are compared by name: each side sends its own "now").
 */
import type { CloudReport } from './check';
import { recordEc2SpotLife } from './spec-aws';
import { SPOT_PRICES, spotPriceHistoryXml, spotRequest, spotRequestsXml } from '../fixtures/aws/spot';
import { startAwsDouble } from '../providers/aws/double';
import { runDriver } from './vendor';

/** The parameters of one action's first form body among `bodies`. */
function paramsOf(bodies: readonly unknown[], action: string): Record<string, string> {
  const body = bodies.find((b): b is string => typeof b === 'string' && b.startsWith(`Action=${action}&`));
  if (!body) throw new Error(`aws spot: our adapter sent no ${action}`);
  return Object.fromEntries(new URLSearchParams(body));
}

const SPOT_PARAM = /^(InstanceMarketOptions\.|InstanceType|ProductDescription\.|StartTime|EndTime|Filter\.|MaxResults)/;
const TIMES = new Set(['StartTime', 'EndTime']);

/** The spot parameters of a call, sorted; times by name only. */
export const spotParams = (action: string, p: Record<string, string>): string[] =>
  Object.entries(p)
    .filter(([k]) => SPOT_PARAM.test(k) && !(action === 'RunInstances' && k === 'InstanceType'))
    .map(([k, v]) => (TIMES.has(k) ? k : `${k}=${v}`))
    .sort();

const ACTIONS = ['RunInstances', 'DescribeSpotPriceHistory', 'DescribeSpotInstanceRequests'] as const;

export async function checkAwsSpot(): Promise<CloudReport & { ours: Record<string, string[]> }> {
  const bodies = (await recordEc2SpotLife()).map((x) => x.body);
  const ours = Object.fromEntries(ACTIONS.map((a) => [a, paramsOf(bodies, a)]));
  const marked = spotRequest('sir-0c0ffee0c0ffee0c0', 'i-0123456789abcdef0', 'marked-for-termination', '2026-12-04T01:02:03.000Z');
  const answers = [
    {
      op: 'DescribeSpotPriceHistory',
      xml: spotPriceHistoryXml(),
      expect: SPOT_PRICES.map((p) => [p.zone, p.instanceType, p.price, p.timestamp.slice(0, 19)]),
    },
    {
      op: 'DescribeSpotInstanceRequests',
      xml: spotRequestsXml([marked]),
      expect: [[marked.requestId, marked.instanceId, marked.code, marked.updateTime.slice(0, 19), marked.state]],
    },
  ];
  const d = await startAwsDouble();
  let r;
  try {
    r = await runDriver('aws_spot.py', { url: d.url, answers, ours });
  } finally {
    await d.close();
  }
  const wire = new Map(
    r.notes
      .filter((n) => n.startsWith('wire '))
      .map((n) => JSON.parse(n.slice(5)) as { action: string; params: Record<string, string> })
      .map((w) => [w.action, w.params]),
  );
  const failures = r.calls.filter((c) => !c.ok).map((c) => `${c.call}: ${c.error ?? c.skipped ?? ''}`);
  const mine: Record<string, string[]> = {};
  for (const a of ACTIONS) {
    mine[a] = spotParams(a, ours[a]!);
    const theirs = spotParams(a, wire.get(a) ?? {});
    if (JSON.stringify(mine[a]) !== JSON.stringify(theirs)) failures.push(`${a} spot parameters: ours ${mine[a].join('&')}, boto3 ${theirs.join('&')}`);
  }
  return { cloud: 'aws (spot)', client: r.client, version: r.version, mismatches: failures.length, accepted: 0, failures, notes: [], ours: mine };
}
