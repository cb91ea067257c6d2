/**
 * `provision explain`: the story of one VM, built from its status and its history (pure; the
 * command fetches both). Plans come from the `planOffers` results in history; attempts, blocks
 * and spend from the status' attempts table; clean-ups from the teardown activities.
 *
 * Why an offer sits where it does in a plan (the order of `planOffers`):
 * | the user named clouds (`--cloud a,b`) | their order, then each cloud's own listing order |
 * | otherwise                             | price per hour, cheapest first; same price: cloud order; no price: last |
 * | the offer answered Capacity lately     | after every other offer (the deployment's capacity memory, `demoted`) |
 * | `--spot auto`                          | every spot offer first, then on-demand; the rows above within each market |
 */
import type { PlanOutput } from '../activities';
import type { AttemptRecord, RecoveryRecord, RetiringInstance, VmStatus } from '../core/api';
import { recoveryLine, retiringLine } from '../core/recovery';
import type { BlockScope } from '../core/errors';
import { SDK_FAILURE_KINDS } from '../core/failures';
import { marketOf, offerKey } from '../core/offers';
import { capacityKey } from '../core/capacity-memory';
import type { Market, Offer, SpotMode } from '../core/provider';
import { blockFor, decide, isBlocked, kindOfFailureType, type Block } from '../core/search';
import { spendSoFar, type Spend } from '../core/spend';
import { reservedLines } from '../core/reserved-window';
import type { ActivityStep, VmHistory } from './history';
import { duration, offerPrice, spendLine, table, usd } from './output';

export interface PlannedOffer {
  rank: number;
  offer: string;
  pricePerHour?: number;
  /** Spot (or reserved) offers only: the market, and the on-demand price beside the spot price. */
  market?: Market;
  onDemandPricePerHour?: number;
  /** Why it sits at this rank. */
  why: string;
  /** What became of it: `attempt 2: ready`, `skipped: blocked by attempt 1 (Quota, region)`, `not reached`. */
  fate: string;
}

export interface PlanStory {
  at: string;
  offers: PlannedOffer[];
  /** Clouds that could not plan, and why. */
  skippedClouds: { cloud: string; kind: string; message: string }[];
  /** Offers the quota pre-check dropped before any attempt (`cloud/region/type`), and why. */
  quotaSkipped: { offer: string; message: string }[];
  /** Quotas the pre-check could not read (offers kept); absent in reports of older plans. */
  quotaUnchecked?: { where: string; message: string }[];
}

export interface BlockStory {
  byAttempt: number;
  scope: BlockScope;
  what: string;
  kind: string;
  from: string;
  until: string;
  forMs: number;
}

export interface CleanupStory {
  /** `attempt 1` (a compensation) or `the VM` (its teardown). */
  of: string;
  what: string;
  at: string;
  tookMs?: number;
  outcome: 'done' | 'failed' | 'running';
  message?: string;
}

export interface ExplainReport {
  name: string;
  workflowId: string;
  stage: string;
  runs: number;
  execution: string;
  plans: PlanStory[];
  attempts: (AttemptRecord & { billedMs: number; usd: number })[];
  blocks: BlockStory[];
  cleanups: CleanupStory[];
  winner?: { offer: string; pricePerHour?: number; market?: Market; onDemandPricePerHour?: number; instanceId?: string; readyAt?: string };
  timeToReadyMs?: number;
  spend: Spend;
  error?: { kind: string; message: string };
  /** `--recover`: relaunches so far and the last loss (the plans and attempts above are the current run's). */
  recovered?: RecoveryRecord;
  /** A replacement's preempted instance, run beside it until it was deleted. */
  retiring?: RetiringInstance;
  /** Reserved capacity: the reservation or block used, its purchase, the wait for its window, its end (src/core/reserved-window.ts). */
  reserved?: string[];
}

const CLEANUP_ACTIVITIES = ['releaseAt'];
const ms = (iso: string): number => Date.parse(iso);
/** A span to a tenth of a second under 10 s (a local launch is sub-second), else as `duration`. */
const span = (n: number): string => (n < 10_000 ? `${(Math.max(0, n) / 1000).toFixed(1)}s` : duration(n));

function ordinal(n: number): string {
  if (n % 100 >= 11 && n % 100 <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

/** Why each offer of a plan sits at its rank (see the table above); `offset`: the rank before the first. */
function priceReasons(offers: readonly Offer[], userClouds: readonly string[] | undefined, offset: number): string[] {
  if (userClouds?.length) return offers.map((o) => `--cloud order: ${o.cloud} is choice ${userClouds.indexOf(o.cloud) + 1}; then ${o.cloud}'s own order`);
  return offers.map((o, i) => {
    if (o.pricePerHour === undefined) return 'no published price: after every priced offer';
    const prev = offers[i - 1];
    if (prev?.pricePerHour === o.pricePerHour)
      return `same price as #${offset + i}, which ${prev.cloud === o.cloud ? 'the cloud lists' : 'cloud order puts'} first`;
    return `${ordinal(offers.filter((x) => x.pricePerHour !== undefined && x.pricePerHour < o.pricePerHour!).length + 1)} cheapest`;
  });
}

/** Why each offer of a plan sits at its rank (see the table above); under `--spot auto`, within its market. */
export function orderReasons(offers: readonly Offer[], userClouds: readonly string[] | undefined, spot?: SpotMode): string[] {
  if (spot !== 'auto') return priceReasons(offers, userClouds, 0);
  const spotOffers = offers.filter((o) => marketOf(o) === 'spot');
  const rest = offers.filter((o) => marketOf(o) !== 'spot');
  return [
    ...priceReasons(spotOffers, userClouds, 0).map((r) => `spot, before every on-demand offer (--spot auto); ${r}`),
    ...priceReasons(rest, userClouds, spotOffers.length).map((r) => `on-demand, after every spot offer; ${r}`),
  ];
}

/** An offer's price fields for the report: the price charged, and on a spot offer its market and the on-demand price. */
function priceOf(o: Offer): Pick<PlannedOffer, 'pricePerHour' | 'market' | 'onDemandPricePerHour'> {
  const market = marketOf(o);
  return {
    ...(o.pricePerHour !== undefined ? { pricePerHour: o.pricePerHour } : {}),
    ...(market !== 'on-demand' ? { market } : {}),
    ...(market !== 'on-demand' && o.onDemandPricePerHour !== undefined ? { onDemandPricePerHour: o.onDemandPricePerHour } : {}),
  };
}

/** The scope an attempt blocked: recorded, else the default of its kind (histories before `blocked`). */
function blockedScope(a: AttemptRecord): BlockScope | undefined {
  if (a.blocked) return a.blocked;
  if (!a.kind || a.kind === SDK_FAILURE_KINDS.Cancelled || a.outcome === 'ready') return undefined;
  return decide(kindOfFailureType(a.kind), a.phase ?? 'create').block;
}

function planStory(step: ActivityStep, attempts: AttemptRecord[], spec: VmStatus['spec'], won: AttemptRecord | undefined): PlanStory {
  const out = step.result as PlanOutput;
  const offers = out.offers ?? [];
  const demoted = new Map((out.demoted ?? []).map((d) => [d.key, d.reason]));
  // Ranks by price among the offers the memory left in place; the demoted ones say why they are last.
  const kept = orderReasons(
    offers.filter((o) => !demoted.has(capacityKey(o))),
    spec.clouds,
    spec.spot,
  );
  const why = offers.map((o) => demoted.get(capacityKey(o)) ?? kept.shift() ?? '');
  const blocks: { block: Block; by: number }[] = [];
  const planned = offers.map((o, i): PlannedOffer => {
    const key = offerKey(o);
    const a = attempts.find((x) => offerKey(x.offer) === key);
    let fate: string;
    if (a) {
      fate = `attempt ${a.index + 1}: ${a.outcome}${a.kind ? ` (${a.kind}${a.phase ? ` at ${a.phase}` : ''})` : ''}`;
      const scope = blockedScope(a);
      if (scope) blocks.push({ block: blockFor(o, scope, a.kind ?? 'Failed'), by: a.index + 1 });
    } else {
      const b = blocks.find((x) => isBlocked(o, [x.block]));
      fate = b ? `skipped: blocked by attempt ${b.by} (${b.block.kind}, scope ${b.block.scope})` : '';
    }
    return { rank: i + 1, offer: key, ...priceOf(o), why: why[i] ?? '', fate };
  });
  const wonRank = won ? planned.findIndex((p) => p.offer === offerKey(won.offer)) + 1 : 0;
  for (const p of planned) if (!p.fate) p.fate = wonRank > 0 && p.rank > wonRank ? 'not needed: an earlier offer won' : 'not reached';
  const quotaSkipped = (out.quotaSkipped ?? []).map((q) => ({ offer: `${q.cloud}/${q.region}/${q.instanceType}`, message: q.message }));
  const quotaUnchecked = (out.quotaUnchecked ?? []).map((q) => ({ where: q.region ? `${q.cloud}/${q.region}` : q.cloud, message: q.message }));
  return {
    at: step.endedAt ?? step.scheduledAt,
    offers: planned,
    skippedClouds: out.skipped ?? [],
    quotaSkipped,
    ...(quotaUnchecked.length ? { quotaUnchecked } : {}),
  };
}

/** Whose clean-up a teardown activity scheduled at `at` was: the failed attempt it followed, else the VM's. */
function cleanupOf(attempts: readonly AttemptRecord[], at: string): string {
  const a = attempts.find((x) => x.outcome !== 'ready' && ms(x.startedAt) <= ms(at) && ms(at) <= ms(x.endedAt));
  return a ? `attempt ${a.index + 1}` : 'the VM';
}

/** Build the story (pure). `nowMs`: for the spend of what still runs. */
export function buildExplain(status: VmStatus, history: VmHistory, nowMs: number): ExplainReport {
  // After a `--recover` relaunch the attempts are the current launch's: so are the plans told.
  const since = status.recovered ? ms(status.createdAt) : -Infinity;
  const planSteps = history.activities.filter((a) => a.name === 'planOffers' && a.result !== undefined && ms(a.scheduledAt) >= since);
  const spend = spendSoFar(status, nowMs);
  const won = status.attempts.find((a) => a.outcome === 'ready');
  const launchEnd = won?.endedAt ?? status.endedAt ?? status.attempts.at(-1)?.endedAt ?? new Date(nowMs).toISOString();
  const roundEnds = planSteps.map((_, i) => planSteps[i + 1]?.scheduledAt ?? launchEnd);
  const inRound = (a: AttemptRecord, i: number): boolean => {
    const start = planSteps[i]?.endedAt ?? planSteps[i]?.scheduledAt ?? '';
    return ms(a.startedAt) >= ms(start) && ms(a.startedAt) <= ms(roundEnds[i] ?? launchEnd);
  };
  const plans = planSteps.map((p, i) =>
    planStory(
      p,
      status.attempts.filter((a) => inRound(a, i)),
      status.spec,
      won && inRound(won, i) ? won : undefined,
    ),
  );

  const blocks: BlockStory[] = [];
  for (const a of status.attempts) {
    const scope = blockedScope(a);
    if (!scope) continue;
    const b = blockFor(a.offer, scope, a.kind ?? 'Failed');
    const round = planSteps.findIndex((_, i) => inRound(a, i));
    const until = round >= 0 ? (roundEnds[round] ?? launchEnd) : launchEnd;
    const what = b.key ?? [b.cloud, b.region, b.zone, b.instanceType].filter(Boolean).join('/');
    blocks.push({ byAttempt: a.index + 1, scope, what, kind: b.kind, from: a.endedAt, until, forMs: Math.max(0, ms(until) - ms(a.endedAt)) });
  }

  const steps: CleanupStory[] = history.activities
    .filter((a) => CLEANUP_ACTIVITIES.includes(a.name))
    .map((a) => ({
      of: cleanupOf(status.attempts, a.scheduledAt),
      what: a.summary ?? a.name,
      at: a.scheduledAt,
      ...(a.endedAt ? { tookMs: ms(a.endedAt) - ms(a.scheduledAt) } : {}),
      outcome: a.failure ? 'failed' : a.endedAt ? 'done' : 'running',
      ...(a.failure ? { message: a.failure.message } : {}),
    }));
  const byCreate: CleanupStory[] = status.attempts
    .filter((a) => a.releasedByCreate)
    .map((a) => ({ of: `attempt ${a.index + 1}`, what: 'released by its create activity (the cloud refused the create)', at: a.endedAt, outcome: 'done' }));
  const cleanups = [...byCreate, ...steps].sort((a, b) => ms(a.at) - ms(b.at));

  const perAttempt = new Map(spend.attempts.map((s) => [s.index, s]));
  return {
    name: status.name,
    workflowId: history.workflowId,
    stage: status.stage,
    runs: history.runs,
    execution: history.closed?.status ?? 'running',
    plans,
    attempts: status.attempts.map((a) => ({ ...a, billedMs: perAttempt.get(a.index)?.billedMs ?? 0, usd: perAttempt.get(a.index)?.usd ?? 0 })),
    blocks,
    cleanups,
    ...(won
      ? {
          winner: {
            offer: offerKey(won.offer),
            ...priceOf(won.offer),
            ...(won.instanceIds[0] ? { instanceId: won.instanceIds[0] } : {}),
            ...(status.readyAt ? { readyAt: status.readyAt } : {}),
          },
        }
      : {}),
    ...(status.readyAt ? { timeToReadyMs: ms(status.readyAt) - ms(status.createdAt) } : {}),
    spend,
    ...(status.error ? { error: status.error } : {}),
    ...(status.recovered ? { recovered: status.recovered } : {}),
    ...(status.retiring ? { retiring: status.retiring } : {}),
    ...(status.reserved ? { reserved: reservedLines(status.reserved, status.stage) } : {}),
  };
}

const clock = (iso: string): string => iso.slice(11, 19);

/** The report as text for people (pure). */
export function formatExplain(r: ExplainReport): string {
  const out: string[] = [`${r.name}: stage ${r.stage} (workflow ${r.workflowId}, ${r.execution}${r.runs > 1 ? `, ${r.runs} runs` : ''})`];
  if (r.plans.length === 0) out.push('', 'no plan in history (the launch never planned)');
  r.plans.forEach((p, i) => {
    out.push('', `plan ${i + 1} at ${clock(p.at)} — ${p.offers.length} offer${p.offers.length === 1 ? '' : 's'}, in the order they were tried:`);
    out.push(
      table([['#', 'OFFER', 'PRICE', 'WHY HERE', 'WHAT HAPPENED'], ...p.offers.map((o) => [String(o.rank), o.offer, offerPrice(o), o.why, o.fate])]).trimEnd(),
    );
    for (const s of p.skippedClouds) out.push(`  cloud ${s.cloud} not planned: ${s.kind}: ${s.message}`);
    for (const q of p.quotaSkipped) out.push(`  ${q.offer} not planned (quota pre-check, no attempt): ${q.message}`);
    for (const q of p.quotaUnchecked ?? []) out.push(`  ${q.where} planned without its quota (pre-check failed): ${q.message}`);
  });
  if (r.attempts.length) {
    out.push('', 'attempts:');
    out.push(
      table([
        ['#', 'OFFER', 'OUTCOME', 'KIND', 'BILLED', 'SPEND', 'VENDOR MESSAGE'],
        ...r.attempts.map((a) => [
          String(a.index + 1),
          offerKey(a.offer),
          `${a.outcome}${a.compensated ? ' (cleaned up)' : ''}`,
          a.kind ? `${a.kind}${a.phase ? ` at ${a.phase}` : ''}` : '-',
          a.billedMs > 0 ? duration(a.billedMs) : '-',
          usd(a.usd),
          a.message?.split('\n')[0] ?? '',
        ]),
      ]).trimEnd(),
    );
  }
  if (r.blocks.length) {
    out.push('', 'blocked:');
    for (const b of r.blocks) out.push(`  ${b.what}: ${b.kind}, scope ${b.scope}, by attempt ${b.byAttempt}, for ${span(b.forMs)} (until ${clock(b.until)})`);
  }
  if (r.cleanups.length) {
    out.push('', 'cleaned up:');
    for (const c of r.cleanups)
      out.push(
        `  ${clock(c.at)} ${c.of}: ${c.what}: ${c.outcome}${c.tookMs !== undefined ? ` in ${span(c.tookMs)}` : ''}${c.message ? ` — ${c.message}` : ''}`,
      );
  }
  out.push('');
  if (r.winner) {
    const ready = r.timeToReadyMs !== undefined ? `; ready ${span(r.timeToReadyMs)} after the start` : '';
    out.push(`winner: ${r.winner.offer} at ${offerPrice(r.winner)}${r.winner.instanceId ? `, instance ${r.winner.instanceId}` : ''}${ready}`);
  } else out.push('winner: none');
  if (r.error) out.push(`error: ${r.error.kind}: ${r.error.message.split('\n')[0]}`);
  if (r.recovered) out.push(`recovered (--recover): ${recoveryLine(r.recovered)}`);
  if (r.retiring) out.push(`replaced: ${retiringLine(r.retiring)}`);
  for (const line of r.reserved ?? []) out.push(`reserved: ${line}`);
  out.push(`spend: ${spendLine(r.spend)}`);
  return out.join('\n') + '\n';
}
