import { describe, expect, it } from 'vitest';
import type { AttemptRecord, VmStatus } from '../../../src/core/api';
import type { Offer } from '../../../src/core/provider';
import { buildExplain, formatExplain, orderReasons } from '../../../src/client/explain-report';
import type { VmHistory } from '../../../src/client/history';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();
const o = (region: string, instanceType: string, pricePerHour?: number, cloud = 'aws'): Offer => ({
  cloud,
  region,
  instanceType,
  ...(pricePerHour !== undefined ? { pricePerHour } : {}),
});
const OFFERS = [o('us-east-1', 'p5', 36), o('us-east-1', 'p4', 36), o('us-west-2', 'p5', 40), o('eu-west-1', 'p5')];

describe('orderReasons', () => {
  it('by price (ties keep the listing order; no price last), or the user cloud order', () => {
    expect(orderReasons(OFFERS, undefined)).toEqual([
      '1st cheapest',
      'same price as #1, which the cloud lists first',
      '3rd cheapest',
      'no published price: after every priced offer',
    ]);
    expect(orderReasons([o('r', 't', 1, 'gcp')], ['aws', 'gcp'])[0]).toBe("--cloud order: gcp is choice 2; then gcp's own order");
  });
  it('--spot auto: spot first, then on-demand, each ranked within its market', () => {
    const spot = (t: string, p: number) => ({ ...o('r', t, p), market: 'spot' as const });
    expect(orderReasons([spot('a', 1), spot('b', 1), o('r', 'c', 0.5), o('r', 'd', 2)], undefined, 'auto')).toEqual([
      'spot, before every on-demand offer (--spot auto); 1st cheapest',
      'spot, before every on-demand offer (--spot auto); same price as #1, which the cloud lists first',
      'on-demand, after every spot offer; 1st cheapest',
      'on-demand, after every spot offer; 2nd cheapest',
    ]);
  });
});

describe('buildExplain', () => {
  // A Quota failure in us-east-1 (an older record: no `blocked`, no `createdAt`) blocks the region's other offer.
  const attempts: AttemptRecord[] = [
    {
      index: 0,
      offer: OFFERS[0]!,
      outcome: 'failed',
      phase: 'create',
      kind: 'Quota',
      message: 'VcpuLimitExceeded: You have requested more vCPU capacity',
      instanceIds: [],
      compensated: true,
      startedAt: at(2),
      endedAt: at(5),
    },
    { index: 1, offer: OFFERS[2]!, outcome: 'ready', instanceIds: ['i-9'], compensated: false, startedAt: at(5), endedAt: at(65), createdAt: at(6) },
  ];
  const status: VmStatus = {
    apiVersion: 1,
    name: 'gpu1',
    stage: 'ready',
    spec: { name: 'gpu1' },
    instanceIds: ['i-9'],
    attempts,
    createdAt: at(0),
    readyAt: at(66),
  };
  const history: VmHistory = {
    workflowId: 'vm-gpu1',
    runs: 1,
    startedAt: at(0),
    activities: [
      {
        name: 'planOffers',
        scheduledAt: at(1),
        endedAt: at(2),
        input: [],
        result: { offers: OFFERS, capabilities: {}, skipped: [{ cloud: 'gcp', kind: 'Credentials', message: 'no credentials' }] },
      },
      { name: 'releaseAt', summary: 'clean up gpu1 side resources in aws/us-east-1', scheduledAt: at(3), endedAt: at(5), input: [] },
    ],
  };

  it('tells the capacity block used, its purchase, the wait and the upfront price in the spend', () => {
    const reserved: VmStatus['reserved'] = {
      reservation: { id: 'cb-1', kind: 'capacity-block', total: 1, free: 0, start: at(30), end: at(3_600), cloud: 'aws', region: 'us-east-1' },
      block: { offeringId: 'cbo-1', upfrontPrice: 700, currency: 'USD', boughtAt: at(1) },
      wait: { since: at(2), until: at(30), line: 'waiting for block cb-1', waitedUntil: at(30) },
    };
    const text = formatExplain(buildExplain({ ...status, reserved }, history, T0 + 366_000));
    expect(text).toContain(`reserved: capacity block cbo-1 bought ${at(1)} for $700 upfront`);
    expect(text).toContain(`reserved: capacity-block cb-1 at aws/us-east-1, window ${at(30)} to ${at(3_600)}`);
    expect(text).toContain(`reserved: waited for the window from ${at(2)} until ${at(30)}`);
    expect(text).toMatch(/spend: \$7\d\d\.\d+ so far .*incl\. \$700\.00 paid upfront for the capacity block/);
  });

  it('tells the plan, the block, the clean-up, the winner and the spend', () => {
    const r = buildExplain(status, history, T0 + 366_000);
    expect(r.plans[0]!.offers.map((p) => p.fate)).toEqual([
      'attempt 1: failed (Quota at create)',
      'skipped: blocked by attempt 1 (Quota, scope region)',
      'attempt 2: ready',
      'not needed: an earlier offer won',
    ]);
    expect(r.plans[0]!.skippedClouds).toHaveLength(1);
    expect(r.blocks).toEqual([{ byAttempt: 1, scope: 'region', what: 'aws/us-east-1', kind: 'Quota', from: at(5), until: at(65), forMs: 60_000 }]);
    expect(r.cleanups).toEqual([{ of: 'attempt 1', what: 'clean up gpu1 side resources in aws/us-east-1', at: at(3), tookMs: 2_000, outcome: 'done' }]);
    expect(r.winner).toEqual({ offer: 'aws/us-west-2/-/p5', pricePerHour: 40, instanceId: 'i-9', readyAt: at(66) });
    expect(r.timeToReadyMs).toBe(66_000);
    // 360 s at 40 $/h = 4 $
    expect(r.spend.totalUsd).toBe(4);
    const text = formatExplain(r);
    expect(text).toContain('cloud gcp not planned: Credentials: no credentials');
    expect(text).toContain('VcpuLimitExceeded');
    expect(text).toContain('winner: aws/us-west-2/-/p5 at $40.00/h, instance i-9; ready 1m6s after the start');
  });

  it('a launch that never planned says so', () => {
    const r = buildExplain(
      { ...status, attempts: [], stage: 'failed', error: { kind: 'InvalidRequest', message: 'no offer' } },
      { ...history, activities: [] },
      T0,
    );
    expect(formatExplain(r)).toContain('no plan in history');
    expect(r.winner).toBeUndefined();
  });
});

describe('buildExplain: the capacity memory and the quota pre-check', () => {
  it("says why an offer was tried last: the deployment's memory of a Capacity answer", () => {
    const offers = [o('us-west-2', 'p5', 40), o('us-east-1', 'p5', 36)];
    const status: VmStatus = { apiVersion: 1, name: 'gpu2', stage: 'planning', spec: { name: 'gpu2' }, instanceIds: [], attempts: [], createdAt: at(0) };
    const reason = 'answered Capacity 12s ago (remembered until 2026-01-01T00:03:00.000Z): tried last';
    const history: VmHistory = {
      workflowId: 'vm-gpu2',
      runs: 1,
      startedAt: at(0),
      activities: [
        {
          name: 'planOffers',
          scheduledAt: at(1),
          endedAt: at(2),
          input: [],
          result: {
            offers,
            capabilities: {},
            skipped: [],
            demoted: [{ key: 'aws/us-east-1/p5', until: at(180), reason }],
            quotaSkipped: [{ cloud: 'aws', region: 'eu-west-1', instanceType: 'p5', message: 'quota L-417A185B in eu-west-1: 0 vCPUs, p5 needs 192' }],
            quotaUnchecked: [
              { cloud: 'aws', region: 'us-east-1', message: 'quota L-417A185B in us-east-1 not checked (AccessDeniedException): its offers are kept' },
            ],
          },
        },
      ],
    };
    const r = buildExplain(status, history, T0 + 10_000);
    expect(r.plans[0]!.offers.map((p) => p.why)).toEqual(['1st cheapest', reason]);
    expect(formatExplain(r)).toContain('tried last');
    expect(formatExplain(r)).toContain('aws/eu-west-1/p5 not planned (quota pre-check, no attempt): quota L-417A185B in eu-west-1: 0 vCPUs, p5 needs 192');
    expect(formatExplain(r)).toContain(
      'aws/us-east-1 planned without its quota (pre-check failed): quota L-417A185B in us-east-1 not checked (AccessDeniedException): its offers are kept',
    );
  });
});
